"""Framed messages over a Unix stream socket: a JSON header and optional raw tensor buffers.

A frame is two little-endian 64-bit sizes (header, buffers), the UTF-8 JSON header and the
buffers back to back. A header with a value carries its description under ``"value"``
(wire_values.py); the buffers are that value's tensors. A large value's buffers travel in a
memory file instead (shared_values.py): the header then says ``"shared": <bytes>``, the frame
carries no buffers, and the file's descriptor comes with the frame's first bytes. A large GPU
value the receiver asked to get that way stays on the GPU (cuda_ipc.py): the header then says
``"cuda_ipc": [entries]`` naming each tensor's device memory, and the frame carries no buffers.
Every size is checked against the description and a limit before anything is allocated, and
nothing is unpickled.
"""

import json
import os
import socket
import struct

from . import cuda_ipc, shared_values, wire_values

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
        # How the last value received came: "gpu", "memory file" or "stream" (None: no value).
        self.last_value_path = None
        # The tensors whose device memory the last GPU value named: the receiver copies it after
        # the frame has gone, so they stay allocated until the other side speaks again, which it
        # does only once it has its copy (a contiguous copy of a strided output is a temporary,
        # and its block could be handed out again).
        self._named_on_gpu = []

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass

    def send(self, header: dict, value=None, has_value: bool = False, on_gpu: bool = False) -> None:
        """``on_gpu``: the receiver asked for a large GPU value to stay on the GPU."""
        header = dict(header)
        tensors = []
        if has_value or value is not None:
            header["value"], tensors = wire_values.encode(value)
        sizes = [wire_values.byte_count(t) for t in tensors]
        if on_gpu and sum(sizes) >= shared_values.SHARED_MIN_BYTES:
            entries = cuda_ipc.export(tensors, sizes)
            if entries is not None:
                header["cuda_ipc"] = entries
                self._named_on_gpu = tensors
                self._send_frame(header, [])
                return
        self._named_on_gpu = []
        if sum(sizes) >= shared_values.SHARED_MIN_BYTES:
            fd = shared_values.write(tensors, sizes)
            if fd is not None:
                header["shared"] = sum(sizes)
                try:
                    self._send_frame(header, [], fd)
                finally:
                    os.close(fd)
                return
        self._send_frame(header, [wire_values.tensor_buffer(t.to("cpu")) for t in tensors])

    def _send_frame(self, header: dict, buffers: list, fd: int | None = None) -> None:
        data = json.dumps(header).encode("utf-8")
        start = _SIZES.pack(len(data), sum(len(b) for b in buffers)) + data
        try:
            if fd is not None:
                # The descriptor rides on the frame's first bytes, where the receiver looks for it.
                sent = socket.send_fds(self._sock, [start], [fd])
                start = start[sent:]
            self._sock.sendall(start)
            for buffer in buffers:
                if len(buffer):
                    self._sock.sendall(buffer)
        except OSError as exc:
            raise ChannelClosed(str(exc)) from None

    def receive(self, device: str | None = None, on_gpu: bool = False) -> tuple:
        """(header, value or None). ``on_gpu``: a GPU value may come as device memory to copy
        (only when this side asked for it; the value then lands on ``device``)."""
        start, fds = self._frame_start()
        self._named_on_gpu = []
        try:
            return self._receive_rest(start, fds[0] if fds else None, device, on_gpu)
        finally:
            for fd in fds:
                os.close(fd)

    def _frame_start(self) -> tuple:
        """The frame's two sizes and any descriptors that came with them (at most one is kept:
        the kernel closes what does not fit)."""
        try:
            data, fds, _, _ = socket.recv_fds(self._sock, _SIZES.size, 1)
        except OSError as exc:
            raise ChannelClosed(str(exc)) from None
        if not data:
            for fd in fds:
                os.close(fd)
            raise ChannelClosed("end of stream")
        if len(data) < _SIZES.size:
            try:
                data += bytes(self._exactly(_SIZES.size - len(data)))
            except ChannelClosed:
                for fd in fds:
                    os.close(fd)
                raise
        return data, fds

    def _receive_rest(self, start: bytes, fd: int | None, device: str | None, on_gpu: bool) -> tuple:
        header_size, payload_size = _SIZES.unpack(start)
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
        shared = header.pop("shared", None)
        if shared is not None and (fd is None or payload_size or type(shared) is not int or "value" not in header):
            raise ProtocolError("a shared value without its memory file, or with bytes in the frame too")
        gpu_entries = header.pop("cuda_ipc", None)
        if gpu_entries is not None and (not on_gpu or not device or shared is not None or payload_size
                                        or "value" not in header):
            raise ProtocolError("a GPU value that was not asked for, or with bytes or a memory file too")
        self.last_value_path = None
        if "value" not in header:
            if payload_size:
                raise ProtocolError("tensor bytes without a value description")
            return header, None
        try:
            sizes = wire_values.tensor_sizes(header["value"])
        except wire_values.WireError as exc:
            raise ProtocolError(str(exc)) from None
        if gpu_entries is not None:
            if sum(sizes) > self.payload_limit:
                raise ProtocolError(f"{sum(sizes)} bytes of tensors (limit {self.payload_limit})")
            try:
                buffers = cuda_ipc.receive(gpu_entries, sizes, device)
            except cuda_ipc.CudaIpcError as exc:
                raise ProtocolError(str(exc)) from None
            self.last_value_path = "gpu"
            return header, wire_values.decode(header.pop("value"), buffers, device)
        announced = payload_size if shared is None else shared
        if sum(sizes) != announced:
            raise ProtocolError(f"the description announces {sum(sizes)} bytes of tensors, the frame {announced}")
        self.last_value_path = "stream" if shared is None else "memory file"
        if shared is None:
            buffers = [self._exactly(size) for size in sizes]
        elif shared > self.payload_limit:
            raise ProtocolError(f"{shared} bytes of tensors (limit {self.payload_limit})")
        else:
            try:
                buffers = shared_values.read(fd, sizes)
            except shared_values.SharedValueError as exc:
                raise ProtocolError(str(exc)) from None
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
