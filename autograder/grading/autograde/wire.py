"""Messages between the grading process and its workers: a length, then a pickle.

Pickle because a job's config holds classes (preprocessors) by reference; both ends run the
same code from the same environment, and the worker is a child the grader started.
"""

import os
import pickle
import select
import struct
import time
from typing import Any, BinaryIO

_HEADER = struct.Struct("!Q")
READY = "ready"  # a worker's first message: imports done, send jobs


class WorkerGone(EOFError):
    """The other end closed the pipe (the worker died or was killed)."""


def send(stream: BinaryIO, message: Any) -> None:
    """Write one message and flush it."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(missing, 1 << 20))
        if not chunk:
            raise WorkerGone
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, timeout: float | None = None) -> Any:
    """Read one message from a file descriptor, waiting at most ``timeout`` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exactly(fd, size, deadline))
