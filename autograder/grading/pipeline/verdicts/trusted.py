"""The trusted kernel's side of a test cell: a listening socket made before any student
code runs, and for each test cell ``begin`` (accept the student kernel's connection, bind
the cell's free names that the trusted kernel does not define to the student's objects)
and ``end`` (end the cell's copy of the student's kernel, if a check lent the reference's
parts to one: ``lending``; tell the student's side to stop)."""

import os
import socket

from autograder.checks.exact import register_fetcher
from autograder.checks.student_side import (
    register_evaluator,
    register_lender,
    unregister_trusted_side,
)
from autograder.grading.pipeline.verdicts import lending
from autograder.grading.pipeline.verdicts.proxy import (
    SESSION,
    Remote,
    evaluate,
    fetch,
    global_value,
    handle_callback,
)
from autograder.kernel.channel import Channel
from autograder.kernel.wire import ChannelBroken


class NoVerdict(RuntimeError):
    """The student's kernel never connected: the test cannot be decided, so it fails."""


def listen(path: str) -> None:
    """Listen at ``path`` for the student kernel's connections (one per test cell)."""
    register_fetcher(Remote, fetch)
    register_evaluator(evaluate)
    register_lender(lending.lending_copy)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o600)
    sock.listen(4)
    SESSION.listener = sock


def stop_listening() -> None:
    """End the session for good: the copy and the connection (``end``), the listening
    socket, and the registrations that made this kernel a trusted one."""
    try:
        end()
    finally:
        listener, SESSION.listener = SESSION.listener, None
        if listener is not None:
            listener.close()
        unregister_trusted_side()


def begin(namespace: dict, names: list[str], timeout: float, wait: float = 60.0) -> None:
    """Accept the student's side and bind ``names`` in ``namespace`` to its objects."""
    end()
    injected = SESSION.injected
    for name, value in list(injected.items()):
        if namespace.get(name) is not value:
            del injected[name]  # the tests rebound it: theirs now
    listener = SESSION.listener
    if listener is None:
        raise NoVerdict("the trusted side is not listening: listen() was never called")
    listener.settimeout(wait)
    try:
        sock, _ = listener.accept()
    except TimeoutError:
        raise NoVerdict(
            f"the student's kernel did not connect within {wait:g} s, so this test has no "
            "verdict and fails (did an earlier cell hang or break the kernel?)"
        ) from None
    sock.settimeout(None)
    SESSION.kernel_pid = lending.peer_pid(sock)
    SESSION.channel = Channel(sock, handle_callback, timeout)
    for name in names:
        if name in namespace and name not in injected:
            continue  # defined by the trusted preamble or an earlier test cell
        try:
            value = global_value(name)
        except NameError:
            if name in injected:
                del namespace[name], injected[name]
            continue
        namespace[name] = injected[name] = value


def end() -> None:
    """End the cell's copy of the student's kernel (if any), stop the student's side (it
    goes back to running the notebook) and close. A copy that left files behind ended the
    kernel too: that is raised, after the close."""
    refused = None
    try:
        lending.end_copy()
    except lending.LendingRefused as error:
        refused = error
    channel, SESSION.channel = SESSION.channel, None
    if channel is not None:
        try:
            channel.stop()
        except (ChannelBroken, OSError):
            if refused is None:
                raise
    if refused is not None:
        raise refused
