"""One connection of the verdict channel, used the same way by both sides: ``request``
sends a call and waits for its reply, answering the other side's calls meanwhile (a
student function may call a trusted callback, which may call the student again).

Any failure in the middle of an exchange (timeout, interrupt, a bad frame) leaves the
connection out of step, so it is closed and every later request fails at once."""

import socket
from collections.abc import Callable

from autograder.kernel import wire
from autograder.kernel.wire import ChannelBroken

# handler(message, segments) -> (reply message, reply segments); never raises for a
# failing call (the failure is the reply).
Handler = Callable[[dict, list[bytes]], tuple[dict, list[bytes]]]


class Stopped(Exception):
    """The other side asked this one to stop serving."""


class Channel:
    """A socket with a handler for the other side's calls and a timeout for replies."""

    def __init__(self, sock: socket.socket, handler: Handler, timeout: float | None) -> None:
        self.sock = sock
        self.handler = handler
        self.timeout = timeout
        self.broken: str | None = None

    def _check(self) -> None:
        if self.broken is not None:
            raise ChannelBroken(f"the channel to the student's kernel is closed: {self.broken}")

    def close(self, reason: str) -> None:
        """Close the socket; later requests fail with ``reason``."""
        if self.broken is None:
            self.broken = reason
        try:
            self.sock.close()
        except OSError:
            pass

    def request(self, message: dict, segments: list[bytes]) -> tuple[dict, list[bytes]]:
        """Send a call and return its reply, serving the other side's calls meanwhile."""
        self._check()
        try:
            wire.send(self.sock, {"kind": "call", **message}, segments)
            return self._until_reply()
        except BaseException as error:  # KeyboardInterrupt too: the exchange is lost
            self.close(f"{type(error).__name__}: {error}")
            raise

    def send_call(self, message: dict) -> None:
        """Send a call whose reply is read later (``reply``): the other side's answer to it
        takes a while (a kernel waiting for its copy to end)."""
        self._check()
        try:
            wire.send(self.sock, {"kind": "call", **message})
        except BaseException as error:
            self.close(f"{type(error).__name__}: {error}")
            raise

    def reply(self, timeout: float | None) -> tuple[dict, list[bytes]]:
        """The reply to the call ``send_call`` sent, waiting at most ``timeout`` seconds."""
        self._check()
        kept, self.timeout = self.timeout, timeout
        try:
            return self._until_reply()
        except BaseException as error:
            self.close(f"{type(error).__name__}: {error}")
            raise
        finally:
            self.timeout = kept

    def _until_reply(self) -> tuple[dict, list[bytes]]:
        while True:
            message, segments = wire.receive(self.sock, self.timeout)
            kind = message.get("kind")
            if kind == "reply":
                return message, segments
            if kind == "call":
                self._answer(message, segments)
            elif kind == "stop":
                raise Stopped
            else:
                raise ChannelBroken(f"unknown message kind {kind!r}")

    def _answer(self, message: dict, segments: list[bytes]) -> None:
        reply, reply_segments = self.handler(message, segments)
        wire.send(self.sock, {"kind": "reply", **reply}, reply_segments)

    def serve(self) -> None:
        """Answer calls until the other side sends stop or closes the connection."""
        self._check()
        try:
            while True:
                message, segments = wire.receive(self.sock, self.timeout)
                kind = message.get("kind")
                if kind == "stop":
                    return
                if kind != "call":
                    raise ChannelBroken(f"unexpected message kind {kind!r}")
                self._answer(message, segments)
        except ChannelBroken as error:
            self.close(str(error))
        except BaseException as error:
            self.close(f"{type(error).__name__}: {error}")
            raise

    def stop(self) -> None:
        """Tell the other side to stop serving, and close."""
        if self.broken is None:
            try:
                wire.send(self.sock, {"kind": "stop"})
            except ChannelBroken:
                pass
        self.close("stopped")
