"""The verdict channel's frames: length-prefixed JSON of exact builtin types, plus raw byte
segments (array buffers). Nothing is ever unpickled; every number, string and container is
checked to be of an exact builtin type after parsing, and sizes are capped."""

import json
import socket
import struct
import time
from typing import Any

_HEADER = struct.Struct("!II")  # JSON length, number of byte segments
_SEGMENT = struct.Struct("!Q")
MAX_JSON = 16 * 2**20
# A whole frame, its segments together: the largest array a check sends is far below, and
# a frame announcing more (segment after segment) must not fill the grader's memory.
MAX_FRAME = 256 * 2**20
MAX_SEGMENT = MAX_FRAME
MAX_SEGMENTS = 4096
MAX_DEPTH = 64
_PLAIN = (str, int, float, bool, type(None))


class ChannelBroken(ConnectionError):
    """The other side closed, timed out or sent something that is not a valid frame."""


def check_plain(value: Any, depth: int = 0) -> None:
    """Raise ChannelBroken unless ``value`` is built only of exact dict/list/str/number/None."""
    if depth > MAX_DEPTH:
        raise ChannelBroken("message nested too deeply")
    kind = type(value)
    if kind in _PLAIN:
        return
    if kind is list:
        for item in value:
            check_plain(item, depth + 1)
        return
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise ChannelBroken("message keys must be strings")
            check_plain(item, depth + 1)
        return
    raise ChannelBroken(f"message holds a {kind.__name__}, not a plain JSON value")


def send(sock: socket.socket, message: dict, segments: list[bytes] = ()) -> None:
    """Write one frame: the JSON message and its byte segments."""
    check_plain(message)
    payload = json.dumps(message, allow_nan=True).encode()
    if len(payload) > MAX_JSON or len(segments) > MAX_SEGMENTS:
        raise ValueError("message too large for the verdict channel")
    parts = [_HEADER.pack(len(payload), len(segments)), payload]
    if len(payload) + sum(len(segment) for segment in segments) > MAX_FRAME:
        raise ValueError("arrays too large together for the verdict channel")
    for segment in segments:
        if len(segment) > MAX_SEGMENT:
            raise ValueError(f"array of {len(segment)} bytes too large for the verdict channel")
        parts += [_SEGMENT.pack(len(segment)), segment]
    try:
        sock.sendall(b"".join(parts))
    except OSError as error:
        raise ChannelBroken(f"cannot send: {error}") from None


def _read(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelBroken("no answer before the channel's timeout")
            sock.settimeout(left)
        try:
            chunk = sock.recv(min(missing, 1 << 20))
        except TimeoutError:
            raise ChannelBroken("no answer before the channel's timeout") from None
        except OSError as error:
            raise ChannelBroken(f"cannot receive: {error}") from None
        if not chunk:
            raise ChannelBroken("the other side closed the channel")
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket, timeout: float | None = None) -> tuple[dict, list[bytes]]:
    """Read one frame, waiting at most ``timeout`` seconds for it (None: forever)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    size, count = _HEADER.unpack(_read(sock, _HEADER.size, deadline))
    if size > MAX_JSON or count > MAX_SEGMENTS:
        raise ChannelBroken("frame larger than the channel allows")
    try:
        message = json.loads(_read(sock, size, deadline))
    except ValueError:
        raise ChannelBroken("frame is not valid JSON") from None
    if type(message) is not dict:
        raise ChannelBroken("frame is not a JSON object")
    check_plain(message)
    segments, total = [], size
    for _ in range(count):
        (length,) = _SEGMENT.unpack(_read(sock, _SEGMENT.size, deadline))
        total += length
        if length > MAX_SEGMENT or total > MAX_FRAME:
            raise ChannelBroken("frame larger than the channel allows")
        segments.append(_read(sock, length, deadline))
    return message, segments
