"""The trusted side's view of the student's objects: ``Remote`` proxies that forward every
operation over the verdict channel and rebuild each answer from plain data.

What comes back is plain data (exact builtin types, NumPy arrays and scalars of numeric
dtype rebuilt from bytes) or another proxy; a proxy's truth value, length, membership and
isinstance answers are exact builtins that came over the wire, never an object's own
opinion. Student classes come back as classes of ``RemoteClass`` (so ``isinstance(x,
Tensor)`` and ``Tensor(...)`` work), student exception classes as local Exception
subclasses of the same name and builtin base (so ``except StudentError`` catches what the
student side raised). Trusted values go to the student by value; trusted callables as
callbacks the student may only call; torch objects never."""

import functools
import operator
import socket
import sys
import types
from collections.abc import Callable
from typing import Any

from autograder.kernel.channel import Channel
from autograder.kernel.values import (
    Codec,
    builtin_exception,
    decode_call,
    encode_call,
    error_tag,
)
from autograder.kernel.wire import ChannelBroken

_CALLABLES = (
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    functools.partial,
)


class Session:
    """The verdict layer's state, in one place: where the student's kernel connects, the open
    connection, the callbacks it may call, the copy serving the current cell and the names
    bound in the test namespace."""

    def __init__(self) -> None:
        self.listener: socket.socket | None = None  # where the kernel and its copies connect
        self.channel: Channel | None = None
        # The copy of the kernel serving the current test cell (lending.Copy), at most one.
        self.copy: Any = None
        # name -> the proxy or value bound from the student's kernel (rebound each cell)
        self.injected: dict[str, Any] = {}
        self.callbacks: dict[int, Callable] = {}
        self.callback_ids: dict[int, int] = {}
        # One proxy per student object for the kernel's life (the student side keeps the
        # object too), so ``is`` and ``id()`` of proxies mean what they mean there.
        self.proxies: dict[int, Remote] = {}
        self.classes: dict[int, type] = {}
        self.error_classes: dict[int, type] = {}  # student exception classes, by id
        self.kernel_pid = 0  # the student's kernel, as its connection says (SO_PEERCRED)

    def references(self) -> set[int]:
        """The ids of every student object or class this side holds a stand-in for."""
        return {*self.proxies, *self.classes, *self.error_classes}

    def forget(self, ids: set[int]) -> None:
        """The stand-ins of ``ids`` end (their objects lived in a copy of the kernel that
        has ended): using one raises ReferenceError; the ids may mean other objects later."""
        for rid in ids:
            proxy = self.proxies.pop(rid, None)
            if proxy is not None:
                object.__setattr__(proxy, "_rid", None)
            cls = self.classes.pop(rid, None)
            if cls is not None:
                type.__setattr__(cls, "_rid", None)
            error_class = self.error_classes.pop(rid, None)
            if error_class is not None and getattr(error_class, "__remote_id__", None) == rid:
                error_class.__remote_id__ = None


ENDED = (
    "this object was made in a copy of your kernel that has ended (the copy that served a "
    "check while the reference's other exercises were lent): it cannot be used any more"
)


def _live(rid: Any) -> int:
    """``rid`` if its object can still be reached; ReferenceError for one made in a copy."""
    if type(rid) is not int:
        raise ReferenceError(ENDED)
    return rid


SESSION = Session()


def _is_torch(value: Any) -> bool:
    """A torch tensor, module or class: never sent to the student's side."""
    torch = sys.modules.get("torch")
    kinds = () if torch is None else (torch.Tensor, torch.nn.Module)
    if isinstance(value, type):
        return issubclass(value, kinds) or str(value.__module__).split(".")[0] == "torch"
    return isinstance(value, kinds) or str(type(value).__module__).split(".")[0] == "torch"


class TrustedCodec(Codec):
    """Trusted values out by value (callables as callbacks); references in as proxies."""

    def other(self, value: Any, segments: list[bytes]) -> Any:
        if isinstance(value, Remote):
            return ["p", _live(object.__getattribute__(value, "_rid"))]
        if isinstance(value, RemoteClass):
            return ["p", _live(value._rid)]
        if isinstance(value, type) and hasattr(value, "__remote_id__"):
            return ["p", _live(value.__remote_id__)]
        if isinstance(value, BaseException):
            return ["xe", error_tag(value)[2], str(error_tag(value)[3])]
        if isinstance(value, type) and builtin_exception(value.__name__) is value:
            return ["bx", value.__name__]
        if _is_torch(value):
            raise TypeError(
                f"a torch value ({type(value).__name__}: {_short(value)}) cannot be given to "
                "the student's code: give NumPy arrays"
            )
        if isinstance(value, _CALLABLES) or (callable(value) and not isinstance(value, type)):
            names = {key: getattr(value, key, None) for key in ("__name__", "__qualname__")}
            names = {k: v for k, v in names.items() if type(v) is str}
            return ["c", _register_callback(value), names]
        raise TypeError(
            f"a {type(value).__name__} cannot be given to the student's code: only numbers, "
            "strings, NumPy arrays, lists/tuples/dicts of those, the student's own objects "
            "and functions"
        )

    def tagged(self, tag: str, args: list, segments: list[bytes]) -> Any:
        if tag == "r" and len(args) == 3 and type(args[0]) is int and type(args[1]) is str:
            return _materialise(args[0], args[1], args[2])
        if tag == "c" and len(args) >= 1 and args[0] in SESSION.callbacks:
            return SESSION.callbacks[args[0]]
        return super().tagged(tag, args, segments)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


CODEC = TrustedCodec()


def _register_callback(function: Callable) -> int:
    key = id(function)
    if key not in SESSION.callback_ids:
        ident = len(SESSION.callbacks) + 1
        SESSION.callbacks[ident] = function
        SESSION.callback_ids[key] = ident
    return SESSION.callback_ids[key]


def handle_callback(message: dict, segments: list[bytes]) -> tuple[dict, list[bytes]]:
    """The student side calling a trusted callable: the only call it may make."""
    out: list[bytes] = []
    try:
        if message.get("op") != "callback" or message.get("id") not in SESSION.callbacks:
            raise PermissionError("the student's side may only call the callbacks it was given")
        function = SESSION.callbacks[message["id"]]
        args, kwargs = decode_call(CODEC, message.get("args"), message.get("kwargs"), segments)
        return {"value": CODEC.encode(function(*args, **kwargs), out)}, out
    except ChannelBroken:
        raise
    except Exception as error:
        return {"error": error_tag(error)}, []


_error_classes: dict[tuple[str, str], type[Exception]] = {}


def student_error_class(name: str, base_name: str) -> type[Exception]:
    """The local class standing for a student exception class: same name, builtin base."""
    builtin = builtin_exception(name)
    if builtin is not None and builtin.__name__ == base_name:
        return builtin
    base = builtin_exception(base_name) or Exception
    key = (name, base.__name__)
    if key not in _error_classes:
        _error_classes[key] = type(name, (base,), {"__module__": "student"})
    return _error_classes[key]


_NO_TARGET = object()


def call(op: str, target: Any = _NO_TARGET, **fields: Any) -> Any:
    """One call to the student's side; its value rebuilt, or its error raised here."""
    __tracebackhide__ = True  # tracebacks show the test and the student's error, not us
    channel = SESSION.channel
    if channel is None:
        raise ChannelBroken("no student kernel is connected (the test has no verdict)")
    segments: list[bytes] = []
    message = {"op": op}
    if target is not _NO_TARGET:
        message["obj"] = CODEC.encode(target, segments)
    for key, value in fields.items():
        plain = key in ("name", "expression")
        message[key] = value if plain else CODEC.encode(value, segments)
    return answer(*channel.request(message, segments))


def answer(reply: dict, segments: list[bytes]) -> Any:
    """A reply's value rebuilt here, or the student's error raised as one of ours."""
    __tracebackhide__ = True
    if "error" in reply:
        error = reply["error"]
        if type(error) is not list or len(error) != 4 or not all(type(e) is str for e in error):
            raise ChannelBroken("bad error reply")
        raise student_error_class(error[1], error[2])(error[3])
    return CODEC.decode(reply.get("value"), segments)


def call_function(target: Any, args: tuple, kwargs: dict) -> Any:
    """``target(*args, **kwargs)`` on the student's side."""
    __tracebackhide__ = True
    channel = SESSION.channel
    if channel is None:
        raise ChannelBroken("no student kernel is connected (the test has no verdict)")
    segments: list[bytes] = []
    encoded_args, encoded_kwargs = encode_call(CODEC, args, kwargs, segments)
    message = {"op": "call", "obj": CODEC.encode(target, segments)}
    message.update(args=encoded_args, kwargs=encoded_kwargs)
    return answer(*channel.request(message, segments))


def exact(kind: type, value: Any, what: str) -> Any:
    """``value`` if it is exactly of ``kind``, else a TypeError naming ``what``."""
    if type(value) is not kind:
        raise TypeError(f"{what} of a student object must be a {kind.__name__}")
    return value


def _binary(name: str, reflected: bool = False) -> Callable:
    def method(self: "Remote", other: Any) -> Any:
        __tracebackhide__ = True
        if reflected:  # other OP self, asked of the student's side in that order
            return call("binary", other, name=name, other=self)
        return call("binary", self, name=name, other=other)

    method.__name__ = f"__{'r' if reflected else ''}{name.rstrip('_')}__"
    return method


def _numbers(value: Any) -> Any:
    """A proxy's numbers fetched by value (None when it holds none); others as they are."""
    if not isinstance(value, Remote):
        return value
    try:
        return fetch(value)
    except TypeError:
        return None


def _comparison(name: str) -> Callable:
    """A comparison decided here, by NumPy, on numbers fetched by value: never by the
    student object's own ``__eq__``. Objects holding no numbers are equal only to
    themselves, and have no order."""
    compare = getattr(operator, name)

    def method(self: "Remote", other: Any) -> Any:
        __tracebackhide__ = True
        left, right = _numbers(self), _numbers(other)
        if left is None or (right is None and isinstance(other, Remote)):
            if name in ("eq", "ne"):
                return (self is other) == (name == "eq")
            raise TypeError(f"a {type(self).__name__} holds no numbers, so it has no order")
        return compare(left, right)

    method.__name__ = f"__{name}__"
    return method


def _unary(name: str) -> Callable:
    def method(self: "Remote") -> Any:
        __tracebackhide__ = True
        return call("unary", self, name=name)

    return method


def _convert(name: str, kind: type) -> Callable:
    def method(self: "Remote") -> Any:
        __tracebackhide__ = True
        return exact(kind, call("convert", self, name=name), f"{name}()")

    return method


def _is_probe(name: str) -> bool:
    """A name libraries probe for (``__array_interface__``, ``_repr_html_``...)."""
    return name.startswith(("_repr_", "_ipython_")) or (
        name.startswith("__") and name.endswith("__") and name not in _NAMED_DUNDERS
    )


# Dunder names a test may read on purpose (a function's name...); every other dunder that
# reaches __getattr__ is a library probing for a protocol, answered here without a call.
_NAMED_DUNDERS = frozenset({"__name__", "__qualname__", "__wrapped__", "__self__", "__func__"})


class Remote:
    """A student object, held by id in the student's kernel; every use is a call there."""

    __slots__ = ("_rid", "__weakref__")
    __array_ufunc__ = None  # NumPy defers to our reflected operators, as with the original

    def __getattr__(self, name: str) -> Any:
        if _is_probe(name):
            raise AttributeError(name)  # protocol probes stay local
        return call("getattr", self, name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        call("setattr", self, name=name, value=value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_function(self, args, kwargs)

    def __getitem__(self, key: Any) -> Any:
        return call("getitem", self, key=key)

    def __setitem__(self, key: Any, value: Any) -> None:
        call("setitem", self, key=key, value=value)

    def __len__(self) -> int:
        return exact(int, call("len", self), "len()")

    def __bool__(self) -> bool:
        # Decided here from the numbers (NumPy's truth of them), never by the object's
        # own __bool__; an object without numbers has no truth value a test could use.
        numbers = _numbers(self)
        if numbers is None:
            raise TypeError(f"the truth of a {type(self).__name__} cannot be decided here")
        return bool(numbers)

    def __iter__(self) -> Any:
        return call("iter", self)

    def __next__(self) -> Any:
        return call("next", self)

    def __contains__(self, item: Any) -> bool:
        return exact(bool, call("contains", self, item=item), "the 'in' test")

    def __repr__(self) -> str:
        return exact(str, call("repr", self), "repr()")

    def __str__(self) -> str:
        return exact(str, call("str", self), "str()")

    def __hash__(self) -> int:
        return object.__hash__(self)  # one proxy per student object: identity

    def __enter__(self) -> Any:
        return call("enter", self)

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        result = call("exit", self, error=error)
        return result is True

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        value = fetch(self)
        return value if dtype is None else value.astype(dtype)


for _name in "add sub mul truediv floordiv mod pow matmul and_ or_ xor lshift rshift".split():
    _plain = _name.rstrip("_")
    setattr(Remote, f"__{_plain}__", _binary(_name))
    setattr(Remote, f"__r{_plain}__", _binary(_name, reflected=True))
for _name in "iadd isub imul itruediv imatmul ipow".split():
    setattr(Remote, f"__{_name}__", _binary(_name))
for _name in "lt le eq ne gt ge".split():
    setattr(Remote, f"__{_name}__", _comparison(_name))
for _name in "neg pos abs invert".split():
    setattr(Remote, f"__{_name}__", _unary(_name))
for _name, _kind in (("float", float), ("int", int), ("complex", complex), ("index", int)):
    setattr(Remote, f"__{_name}__", _convert(_name, _kind))


class RemoteClass(type):
    """The metaclass of a student class's stand-in: calls, isinstance and class attributes
    go to the student's side."""

    _rid: int

    def __new__(mcls, name: str, bases: tuple, namespace: dict, **kwargs: Any) -> Any:
        if "_rid" in namespace:  # the stand-in of a class that exists on the student's side
            return super().__new__(mcls, name, bases, namespace)
        # A test cell's ``class Spy(Function): ...``: the class is made on the student's
        # side, its functions calling back here, so the student's code can use it.
        return _student_subclass(name, bases, namespace)

    def __init__(cls, name: str, bases: tuple, namespace: dict, **kwargs: Any) -> None:
        super().__init__(name, bases, namespace)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return call_function(cls, args, kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        if not isinstance(instance, Remote | RemoteClass):
            return False  # a trusted value is never an instance of a student class
        return exact(bool, call("isinstance", cls, item=instance), "isinstance()")

    def __subclasscheck__(cls, subclass: Any) -> bool:
        if not isinstance(subclass, RemoteClass):
            return False
        return exact(bool, call("issubclass", cls, item=subclass), "issubclass()")

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return call("getattr", cls, name=name)

    def __repr__(cls) -> str:
        return f"<student class {cls.__name__}>"


def _student_subclass(name: str, bases: tuple, namespace: dict) -> Any:
    """Make the class on the student's side; its functions are callbacks to this side."""
    members = {}
    for key, value in namespace.items():
        if key in ("__module__", "__qualname__"):
            continue
        if isinstance(value, staticmethod):
            members[key] = ["static", value.__func__]
        elif isinstance(value, classmethod):
            members[key] = ["class", value.__func__]
        elif isinstance(value, types.FunctionType):
            members[key] = ["method", value]
        else:
            members[key] = ["value", value]
    return call("subclass", name=name, bases=list(bases), members=members)


_instance_classes: dict[str, type] = {}


def _instance_class(type_name: str) -> type:
    """A Remote subclass named after the student's type, so messages name it."""
    if type_name not in _instance_classes:
        _instance_classes[type_name] = type(type_name, (Remote,), {"__slots__": ()})
    return _instance_classes[type_name]


def _invoke(method: Remote, *args: Any, **kwargs: Any) -> Any:
    return call_function(method, args, kwargs)


def _materialise(rid: int, type_name: str, flags: Any) -> Any:
    """The local stand-in for the student object ``rid``, one per object."""
    if type(flags) is not dict:
        raise ChannelBroken("bad reference flags")
    if flags.get("cls") is True:
        name = flags.get("name") if type(flags.get("name")) is str else "object"
        if flags.get("exc") is True:
            base = flags.get("base") if type(flags.get("base")) is str else "Exception"
            cls = student_error_class(name, base)
            if cls.__module__ == "student":
                cls.__remote_id__ = rid
                SESSION.error_classes[rid] = cls
            return cls
        if rid not in SESSION.classes:
            SESSION.classes[rid] = RemoteClass(name, (), {"_rid": rid, "__module__": "student"})
        return SESSION.classes[rid]
    proxy = SESSION.proxies.get(rid)
    if proxy is None:
        proxy = object.__new__(_instance_class(type_name))
        object.__setattr__(proxy, "_rid", rid)
        SESSION.proxies[rid] = proxy
    if flags.get("method") is True:
        # A bound method: a real MethodType, so code that tells methods from values works.
        return types.MethodType(_invoke, proxy)
    return proxy


def fetch(value: Any) -> Any:
    """A student object's numbers, fetched by value (NumPy's reading of it there)."""
    return call("fetch", value)


def global_value(name: str) -> Any:
    """The student's global ``name``, as a proxy or plain value."""
    return call("global", name=name)


def evaluate(expression: str, names: dict[str, Any]) -> Any:
    """``expression`` evaluated in the student's kernel with ``names`` sent there."""
    return call("evaluate", expression=str(expression), names=dict(names))
