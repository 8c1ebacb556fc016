"""The student's side of the verdict channel: run in the student's kernel, on its main
thread, for the length of one test cell. It answers the trusted kernel's calls on the
student's objects (attribute, call, item, operator...) and sends each result back by value
when it is plain data, else as a reference (an id in a table kept for the kernel's life).

When the trusted side lends the reference's parts (``autograder.checks.given``) it asks
for a copy first (``fork``): the kernel forks, and the copy closes every file descriptor,
points 0/1/2 at /dev/null, connects to the trusted side anew and serves the rest of the test
cell there, while the kernel waits for it to end (the trusted side then checks, from
outside, that it really is such a copy: ``lending``). What the copy was lent dies with it.

Nothing here is trusted: the student's code can change this module as it likes. Whatever
it answers is rebuilt and judged on the trusted side."""

import builtins
import io
import operator
import os
import signal
import socket
import sys
import types
from typing import Any

import numpy as np

from autograder.checks.student_side import evaluate_here
from autograder.kernel.channel import Channel
from autograder.kernel.values import (
    Codec,
    builtin_base,
    builtin_exception,
    decode_call,
    encode_call,
    error_tag,
)
from autograder.kernel.wire import ChannelBroken

# The binary and unary operators the trusted side may ask for, by operator-module name.
BINARY = {
    name: getattr(operator, name)
    for name in (
        "add sub mul truediv floordiv mod pow matmul and_ or_ xor lshift rshift "
        "lt le eq ne gt ge iadd isub imul itruediv imatmul ipow"
    ).split()
}
UNARY = {name: getattr(operator, name) for name in ("neg", "pos", "abs", "invert")}
CONVERT = {"float": float, "int": int, "complex": complex, "index": operator.index}


def _name_of(cls: type) -> str:
    """A class's own __name__ as an exact str (a metaclass could make it anything)."""
    try:
        name = type.__dict__["__name__"].__get__(cls)
    except Exception:
        return "object"
    return str.__str__(name) if isinstance(name, str) else "object"


class StudentCodec(Codec):
    """Student objects go out as references; ids and callbacks come back as objects."""

    def __init__(self, table: "ObjectTable", channel_ref: list) -> None:
        self.table = table
        self.channel_ref = channel_ref

    def other(self, value: Any, segments: list[bytes]) -> Any:
        is_class = isinstance(value, type)
        is_error = is_class and issubclass(value, BaseException)
        base = ""
        if is_error:
            base = builtin_base(value).__name__
        flags = {
            "callable": callable(value),
            "cls": is_class,
            "exc": is_error,
            "base": base,
            "method": isinstance(value, types.MethodType | types.BuiltinMethodType),
            "name": _name_of(value) if is_class else "",
        }
        return ["r", self.table.add(value), _name_of(type(value)), flags]

    def tagged(self, tag: str, args: list, segments: list[bytes]) -> Any:
        if tag == "p" and len(args) == 1:
            return self.table.get(args[0])
        if tag == "c" and len(args) == 2 and type(args[0]) is int and type(args[1]) is dict:
            callback = Callback(self, args[0])
            for key in ("__name__", "__qualname__"):
                if type(args[1].get(key)) is str:
                    setattr(callback, key, args[1][key])  # so functools.wraps copies them
            return callback
        if tag == "xe" and len(args) == 2 and type(args[1]) is str:
            found = builtin_exception(args[0]) or Exception
            return found(args[1])
        if tag == "bx" and len(args) == 1:
            found = builtin_exception(args[0])
            if found is None:
                raise ChannelBroken(f"unknown exception class {args[0]!r}")
            return found
        return super().tagged(tag, args, segments)


class ObjectTable:
    """Student objects the trusted side holds, by id; each kept alive so ids stay unique."""

    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}
        self.ids: dict[int, int] = {}

    def add(self, value: Any) -> int:
        """The object's id in the table, adding it if new."""
        key = id(value)
        if key not in self.ids:
            self.ids[key] = len(self.objects) + 1
            self.objects[self.ids[key]] = value
        return self.ids[key]

    def get(self, ident: Any) -> Any:
        """The object with that id."""
        if type(ident) is not int or ident not in self.objects:
            raise ChannelBroken(f"unknown object id {ident!r}")
        return self.objects[ident]


class Callback:
    """A trusted callable the student's code may call (only call); each call goes back."""

    def __init__(self, codec: StudentCodec, ident: int) -> None:
        self._codec = codec
        self._ident = ident

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        channel = self._codec.channel_ref[0]
        if channel is None:
            raise RuntimeError("this callback belongs to a test that has finished")
        segments: list[bytes] = []
        encoded_args, encoded_kwargs = encode_call(self._codec, args, kwargs, segments)
        message = {"op": "callback", "id": self._ident, "args": encoded_args}
        message["kwargs"] = encoded_kwargs
        reply, reply_segments = channel.request(message, segments)
        return unpack_reply(self._codec, reply, reply_segments)


def unpack_reply(codec: Codec, reply: dict, segments: list[bytes]) -> Any:
    """A reply's value, or its error raised as the builtin class of that name."""
    if "error" in reply:
        error = reply["error"]
        if type(error) is not list or len(error) != 4:
            raise ChannelBroken("bad error reply")
        cls = builtin_exception(error[1]) or builtin_exception(error[2]) or Exception
        raise cls(error[3])
    return codec.decode(reply.get("value"), segments)


def _method(callback: Callback, bind_class: bool = False) -> Any:
    """A function calling ``callback`` with its instance (or class) first."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return callback(self, *args, **kwargs)

    method.__name__ = getattr(callback, "__name__", "method")
    return classmethod(method) if bind_class else method


def make_subclass(name: Any, bases: Any, members: Any) -> type:
    """A test's subclass of student classes, its functions calling the trusted side."""
    if type(name) is not str or type(bases) is not list or type(members) is not dict:
        raise ChannelBroken("bad subclass call")
    body = {}
    for key, (kind, value) in members.items():
        if kind == "static":
            body[key] = staticmethod(value)
        elif kind in ("method", "class"):
            body[key] = _method(value, bind_class=kind == "class")
        else:
            body[key] = value
    return types.new_class(name, tuple(bases), exec_body=lambda namespace: namespace.update(body))


def _user_namespace() -> dict:
    """The student's globals: IPython's user namespace, or __main__'s."""
    shell = getattr(builtins, "get_ipython", lambda: None)()
    if shell is not None:
        return shell.user_ns
    import __main__

    return vars(__main__)


def fetch(value: Any) -> Any:
    """The value as plain numbers: NumPy's reading of it (what check_array would compare)."""
    array = np.asarray(value)
    if type(array) is not np.ndarray:
        array = np.ndarray.view(array, np.ndarray)
    if array.dtype.kind not in "biufc":
        raise TypeError(f"a {_name_of(type(value))} holds no numbers (dtype {array.dtype})")
    return np.array(array, copy=True)


class Server:
    """Answers the trusted side's calls on the student's objects."""

    def __init__(self, table: ObjectTable, namespace: dict | None = None, path: str = "") -> None:
        self.channel_ref: list = [None]
        self.codec = StudentCodec(table, self.channel_ref)
        self.namespace = _user_namespace() if namespace is None else namespace
        self.path = path  # the trusted side's socket, where a copy connects

    def handle(self, message: dict, segments: list[bytes]) -> tuple[dict, list[bytes]]:
        """One call, answered with its value or its error."""
        out: list[bytes] = []
        try:
            value = self.run(message, segments)
            return {"value": self.codec.encode(value, out)}, out
        except ChannelBroken:
            raise
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt):
                raise
            return {"error": error_tag(error)}, []

    def arg(self, message: dict, key: str, segments: list[bytes]) -> Any:
        return self.codec.decode(message.get(key), segments)

    def run(self, message: dict, segments: list[bytes]) -> Any:
        op = message.get("op")
        if op == "global":
            name = message.get("name")
            if type(name) is not str or name not in self.namespace:
                raise NameError(f"name {name!r} is not defined in your notebook")
            return self.namespace[name]
        if op in ("evaluate", "subclass"):
            return self.run_protocol(op, None, message, segments)
        if op == "fork":
            return serve_copy(self.path, self.channel_ref[0])
        target = self.arg(message, "obj", segments)
        name = message.get("name")
        if op == "getattr" and type(name) is str:
            return getattr(target, name)
        if op == "setattr" and type(name) is str:
            setattr(target, name, self.arg(message, "value", segments))
            return None
        if op == "call":
            args, kwargs = decode_call(
                self.codec, message.get("args"), message.get("kwargs"), segments
            )
            return target(*args, **kwargs)
        if op == "getitem":
            return target[self.arg(message, "key", segments)]
        if op == "setitem":
            target[self.arg(message, "key", segments)] = self.arg(message, "value", segments)
            return None
        if op == "binary" and name in BINARY:
            return BINARY[name](target, self.arg(message, "other", segments))
        if op == "unary" and name in UNARY:
            return UNARY[name](target)
        if op == "convert" and name in CONVERT:
            return CONVERT[name](target)
        return self.run_protocol(op, target, message, segments)

    def run_protocol(self, op: Any, target: Any, message: dict, segments: list[bytes]) -> Any:
        if op == "len":
            return len(target)
        if op == "iter":
            return iter(target)
        if op == "next":
            return next(target)
        if op == "contains":
            return self.arg(message, "item", segments) in target
        if op == "repr":
            return str.__str__(repr(target))
        if op == "str":
            return str.__str__(str(target))
        if op == "isinstance":
            return isinstance(self.arg(message, "item", segments), target)
        if op == "issubclass":
            return issubclass(self.arg(message, "item", segments), target)
        if op == "fetch":
            return fetch(target)
        if op == "subclass":
            return make_subclass(
                message.get("name"),
                self.arg(message, "bases", segments),
                self.arg(message, "members", segments),
            )
        if op == "evaluate":
            names = self.arg(message, "names", segments)
            expression = message.get("expression")
            if type(names) is not dict or type(expression) is not str:
                raise ChannelBroken("bad evaluate call")
            return evaluate_here(expression, names)
        if op == "enter":
            return type(target).__enter__(target)
        if op == "exit":
            error = self.arg(message, "error", segments)
            if error is None:
                return type(target).__exit__(target, None, None, None)
            return type(target).__exit__(target, type(error), error, None)
        raise ChannelBroken(f"unknown call {op!r}")


_TABLE = ObjectTable()  # for the kernel's life: proxies in later test cells stay valid


def serve_copy(path: str, channel: Channel | None) -> list[int]:
    """Fork a copy of this kernel that serves the trusted side on a connection of its own,
    and wait for it to end: ``[exit status, signal]`` of the copy (0 and 0 when it exited
    cleanly). The kernel serves nothing meanwhile."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _copy_main(path, channel)  # never returns
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        return [0, os.WTERMSIG(status)]
    return [os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0, 0]


def _alone_with(sock: socket.socket) -> socket.socket:
    """Close every file descriptor but ``sock``'s (the kernel's sockets, pipes and files
    are not the copy's to use) and point 0, 1 and 2 at /dev/null."""
    if sock.fileno() < 3:
        import fcntl

        moved = fcntl.fcntl(sock.fileno(), fcntl.F_DUPFD, 3)
        os.close(sock.fileno())
        sock.detach()
        sock = socket.socket(fileno=moved)
    keep = sock.fileno()
    os.closerange(0, keep)
    os.closerange(keep + 1, 1 << 20)
    null = os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: 0
    for fd in (0, 1, 2):
        if fd != null:
            os.dup2(null, fd)
    # Python's own streams on those descriptors (the kernel's wrote to its iopub thread,
    # which the copy does not have); closefd=False: nothing new is opened.
    sink = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stdout = sys.stderr = sys.__stdout__ = sys.__stderr__ = sink
    return sock


def _copy_main(path: str, channel: Channel | None) -> None:
    """The copy: alone with a new connection to the trusted side, it serves until it is
    killed. It never exits with a status of its own: the kernel reads that status when it
    reaps its copy, so the trusted side ends the kernel of a copy that did (a copy that
    cannot go on kills itself as the trusted side would)."""
    try:
        if channel is not None:
            channel.sock.detach()  # the kernel's connection: closed below with the rest
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock = _alone_with(sock)
        sock.settimeout(30)
        sock.connect(path)
        # Blocking from now on: a timeout polls, and poll fails once the trusted side has
        # set the copy's limit of open files to 0.
        sock.settimeout(None)
        server = Server(_TABLE, path=path)
        copy = Channel(sock, server.handle, None)
        server.channel_ref[0] = copy
        copy.serve()
    finally:
        os.kill(os.getpid(), signal.SIGKILL)


def serve(path: str, timeout: float | None = None) -> None:
    """Connect to the trusted kernel at ``path`` and answer its calls until it says stop."""
    server = Server(_TABLE, path=path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(path)
    channel = Channel(sock, server.handle, timeout)
    server.channel_ref[0] = channel
    try:
        channel.serve()
    finally:
        server.channel_ref[0] = None
        channel.close("done")
