"""Framed messages over a stream socket: a JSON header and optional raw tensor buffers.

A frame is two little-endian 64-bit sizes (header, buffers), the UTF-8 JSON header and the
buffers back to back. A header with a value carries its description under ``"value"``
(wire_values.py); the buffers are that value's tensors. Every size is checked against the
description and a limit before anything is allocated, and nothing is unpickled.
"""

import json
import struct

from . import wire_values

HEADER_LIMIT = 4 << 20
_SIZES = struct.Struct("<QQ")


class ChannelClosed(Exception):
    """The other side is gone (EOF or a broken connection)."""


class ProtocolError(Exception):
    """The other side sent something that is not a valid frame."""


class Channel:
    def __init__(self, sock, payload_limit: int = 1 << 36):
        self._sock = sock
        self.payload_limit = payload_limit

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass

    def send(self, header: dict, value=None, has_value: bool = False) -> None:
        header = dict(header)
        tensors = []
        if has_value or value is not None:
            header["value"], tensors = wire_values.encode(value)
        data = json.dumps(header).encode("utf-8")
        buffers = [wire_values.tensor_buffer(t) for t in tensors]
        total = sum(len(b) for b in buffers)
        try:
            self._sock.sendall(_SIZES.pack(len(data), total) + data)
            for buffer in buffers:
                if len(buffer):
                    self._sock.sendall(buffer)
        except OSError as exc:
            raise ChannelClosed(str(exc)) from None

    def receive(self, device: str | None = None) -> tuple:
        """(header, value or None)."""
        header_size, payload_size = _SIZES.unpack(bytes(self._exactly(_SIZES.size)))
        if header_size > HEADER_LIMIT:
            raise ProtocolError(f"a message header of {header_size} bytes (limit {HEADER_LIMIT})")
        if payload_size > self.payload_limit:
            raise ProtocolError(f"{payload_size} bytes of tensors (limit {self.payload_limit})")
        try:
            header = json.loads(bytes(self._exactly(header_size)).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ProtocolError(f"a message header that is not JSON: {type(exc).__name__}") from None
        if not isinstance(header, dict):
            raise ProtocolError("a message header that is not a JSON object")
        if "value" not in header:
            if payload_size:
                raise ProtocolError("tensor bytes without a value description")
            return header, None
        try:
            sizes = wire_values.tensor_sizes(header["value"])
        except wire_values.WireError as exc:
            raise ProtocolError(str(exc)) from None
        if sum(sizes) != payload_size:
            raise ProtocolError(f"the description announces {sum(sizes)} bytes of tensors, the frame {payload_size}")
        buffers = [self._exactly(size) for size in sizes]
        return header, wire_values.decode(header.pop("value"), buffers, device)

    def _exactly(self, size: int) -> bytearray:
        buffer = bytearray(size)
        view = memoryview(buffer)
        done = 0
        while done < size:
            try:
                got = self._sock.recv_into(view[done:], min(size - done, 1 << 24))
            except OSError as exc:
                raise ChannelClosed(str(exc)) from None
            if got == 0:
                raise ChannelClosed("end of stream")
            done += got
        return buffer
