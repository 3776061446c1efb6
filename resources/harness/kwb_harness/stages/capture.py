"""OS-level capture of stdout/stderr.

Compilers, ninja and CUDA runtime messages are written by child processes or C code
straight to file descriptors 1 and 2, so replacing ``sys.stdout`` would miss them; the
descriptors themselves are redirected instead.
"""

import contextlib
import ctypes
import faulthandler
import os
import select
import sys
import tempfile
import threading

LOG_LIMIT = 64 * 1024


def _flush_everything() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    # printf() from a candidate's host code sits in libc's buffer; without this it would
    # come out after the descriptors were restored and land outside the capture.
    try:
        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass


def tail_text(data: bytes | str, limit: int = LOG_LIMIT) -> str:
    """The last ``limit`` bytes, cut at a line start, with a marker saying how much was cut."""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace")
    cut = len(data) - limit
    newline = data.find(b"\n", cut)
    if newline != -1 and newline - cut < 4096:
        cut = newline + 1
    return f"[... {cut} bytes cut ...]\n" + data[cut:].decode("utf-8", errors="replace")


class TeeCapture:
    """Sends fds 1 and 2 through a pipe whose reader keeps a copy and forwards the data.

    Forwarding live (rather than only collecting into a file) matters when the caller
    kills the harness on timeout or a kernel segfaults: whatever was printed up to then
    has already reached the caller's stdout.
    """

    def __init__(self, keep: int = 4 * LOG_LIMIT, forward: bool = True):
        self._keep = keep
        # Not forwarding keeps what the judge prints out of a log file that the candidate's
        # process could read while the stage runs (the warm worker's children log to a file).
        self._forward = forward
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._saved_out = None
        self._saved_err = None
        self._read_fd = None
        self._thread = None
        self._stopping = threading.Event()

    def start(self) -> None:
        _flush_everything()
        self._saved_out = os.dup(1)
        self._saved_err = os.dup(2)
        self._read_fd, write_fd = os.pipe()
        os.dup2(write_fd, 1)
        os.dup2(write_fd, 2)
        os.close(write_fd)
        # A crash inside a kernel kills the process before the result is written; the
        # Python traceback then goes to the caller's real stderr, bypassing the pipe
        # whose reader thread dies with the process.
        faulthandler.enable(file=self._saved_err, all_threads=False)
        self._thread = threading.Thread(target=self._pump, name="kwb-tee", daemon=True)
        self._thread.start()
        try:
            sys.stdout.reconfigure(line_buffering=True)
            sys.stderr.reconfigure(line_buffering=True)
        except Exception:
            pass

    def _pump(self) -> None:
        while True:
            # Polling instead of a blocking read: compile workers that inherited the pipe
            # may keep it open forever, so end-of-file cannot be the only way out.
            readable, _, _ = select.select([self._read_fd], [], [], 0.1)
            if not readable:
                if self._stopping.is_set():
                    return
                continue
            try:
                chunk = os.read(self._read_fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._buffer += chunk
                if len(self._buffer) > 2 * self._keep:
                    del self._buffer[: len(self._buffer) - self._keep]
            view = memoryview(chunk) if self._forward else memoryview(b"")
            while view:
                try:
                    written = os.write(self._saved_out, view)
                except OSError:
                    # The caller stopped reading; the copy in the buffer still matters.
                    break
                view = view[written:]

    def stop(self) -> str:
        _flush_everything()
        os.dup2(self._saved_out, 1)
        os.dup2(self._saved_err, 2)
        faulthandler.enable(file=2, all_threads=False)
        # Everything written so far is in the pipe; the reader drains it and then stops.
        self._stopping.set()
        self._thread.join(timeout=5.0)
        os.close(self._saved_out)
        os.close(self._saved_err)
        with self._lock:
            data = bytes(self._buffer)
        return tail_text(data, LOG_LIMIT)


class FileCapture:
    """Holds the text captured by :func:`redirect_to_file` once the block has ended."""

    def __init__(self):
        self.text = ""


@contextlib.contextmanager
def redirect_to_file():
    """Redirects fds 1 and 2 into a temporary file for the duration of the block."""
    holder = FileCapture()
    _flush_everything()
    saved_out = os.dup(1)
    saved_err = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield holder
        finally:
            _flush_everything()
            os.dup2(saved_out, 1)
            os.dup2(saved_err, 2)
            os.close(saved_out)
            os.close(saved_err)
            sink.seek(0)
            holder.text = sink.read().decode("utf-8", errors="replace")
