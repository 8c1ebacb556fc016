"""Values on the verdict channel as tagged JSON: the plain ones (None, bool, numbers, str,
bytes, NumPy arrays and scalars of numeric dtype, lists, tuples, dicts, slices) by value,
everything else through the hooks each side defines (references, proxies, callbacks).

Arrays travel as dtype string + shape + a raw byte segment and are rebuilt with
``np.frombuffer(...).reshape(...).copy()`` after their dtype and size are validated.
"""

import builtins
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.kernel.wire import MAX_DEPTH, MAX_SEGMENT, ChannelBroken

NUMERIC_KINDS = "biufc"
_DTYPE = re.compile(r"[<>|=]?[biufc][0-9]{1,2}")
_BUILTIN_TYPES = {"int": int, "float": float, "bool": bool, "complex": complex, "str": str}


def array_tag(array: np.ndarray, segments: list[bytes]) -> list:
    """An exact ndarray of numbers as ["a", dtype, shape, segment index]."""
    if array.dtype.kind not in NUMERIC_KINDS:
        raise TypeError(f"an array of dtype {array.dtype} cannot travel: only numbers")
    dtype = array.dtype if array.dtype.isnative else array.dtype.newbyteorder("=")
    data = np.ascontiguousarray(array, dtype=dtype).tobytes()
    if len(data) > MAX_SEGMENT:
        raise TypeError(f"an array of {len(data)} bytes is too large to travel")
    segments.append(data)
    return ["a", dtype.str, list(array.shape), len(segments) - 1]


def rebuild_array(dtype_text: Any, shape: Any, index: Any, segments: list[bytes]) -> np.ndarray:
    """The array that ``array_tag`` described, validated: numeric dtype, matching size."""
    if type(dtype_text) is not str or not _DTYPE.fullmatch(dtype_text):
        raise ChannelBroken(f"bad array dtype {dtype_text!r}")
    dtype = np.dtype(dtype_text)
    if dtype.kind not in NUMERIC_KINDS:
        raise ChannelBroken(f"bad array dtype {dtype_text!r}")
    if type(shape) is not list or len(shape) > 32:
        raise ChannelBroken("bad array shape")
    if not all(type(n) is int and n >= 0 for n in shape):
        raise ChannelBroken("bad array shape")
    if type(index) is not int or not 0 <= index < len(segments):
        raise ChannelBroken("bad array segment")
    data = segments[index]
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count * dtype.itemsize != len(data):
        raise ChannelBroken("array size does not match its bytes")
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def _generator(state: Any) -> np.random.Generator:
    """A NumPy Generator in the given state (its bit generator one of NumPy's own)."""
    name = state.get("bit_generator") if type(state) is dict else None
    if name not in _BIT_GENERATORS:
        raise ChannelBroken(f"bad random generator state ({name!r})")
    bit_generator = getattr(np.random, name)()
    try:
        bit_generator.state = state
    except (TypeError, ValueError, KeyError) as error:
        raise ChannelBroken(f"bad random generator state: {error}") from None
    return np.random.Generator(bit_generator)


def builtin_base(cls: type) -> type:
    """The first class in ``cls``'s ancestry that is Python's own builtin of its name."""
    for ancestor in type.__dict__["__mro__"].__get__(cls):
        if getattr(builtins, ancestor.__name__, None) is ancestor:
            return ancestor
    return object


def error_tag(error: BaseException) -> list:
    """An exception as ["err", class name, nearest builtin base's name, message]."""
    base = builtin_base(type(error))
    if not issubclass(base, Exception):
        base = RuntimeError  # SystemExit, KeyboardInterrupt...: an error, not a stop
    try:
        message = str(error)
    except Exception:
        message = ""
    name = type.__dict__["__name__"].__get__(type(error))
    return ["err", str.__str__(name), base.__name__, str.__str__(str(message))[:4000]]


def builtin_exception(name: Any) -> type[Exception] | None:
    """The builtin Exception subclass of that name, or None."""
    value = getattr(builtins, name, None) if type(name) is str else None
    if isinstance(value, type) and issubclass(value, Exception):
        return value
    return None


class Codec:
    """Encodes and decodes values; subclasses handle what is not plain (``other``/``tagged``)."""

    def encode(self, value: Any, segments: list[bytes], depth: int = 0) -> Any:
        """``value`` as tagged JSON; arrays' bytes appended to ``segments``."""
        if depth > MAX_DEPTH:
            raise TypeError("value nested too deeply to travel")
        kind = type(value)
        if value is None:
            return ["n"]
        if kind is bool:
            return ["b", value]
        if kind is int:
            return ["i", value]
        if kind is float:
            return ["f", value]
        if kind is complex:
            return ["x", value.real, value.imag]
        if kind is str:
            return ["s", value]
        if kind is bytes:
            segments.append(value)
            return ["y", len(segments) - 1]
        if kind is np.ndarray and value.dtype.kind in NUMERIC_KINDS:
            return array_tag(value, segments)
        if isinstance(value, np.generic) and kind.__module__ == "numpy":
            if value.dtype.kind in NUMERIC_KINDS:
                return ["ns", array_tag(np.asarray(value), segments)]
        if kind is list or kind is tuple:
            items = [self.encode(item, segments, depth + 1) for item in value]
            return ["l" if kind is list else "t", items]
        if kind is dict:
            pairs = [
                [self.encode(k, segments, depth + 1), self.encode(v, segments, depth + 1)]
                for k, v in value.items()
            ]
            return ["d", pairs]
        if kind is slice:
            parts = (value.start, value.stop, value.step)
            return ["sl", [self.encode(p, segments, depth + 1) for p in parts]]
        if value is Ellipsis:
            return ["e"]
        if kind.__module__ == "numpy" and isinstance(value, np.dtype):
            if value.kind in NUMERIC_KINDS:
                return ["dt", value.str]
        if kind is np.random.Generator:
            # By value: its state; draws on one side do not advance the other's copy.
            return ["rng", self.encode(value.bit_generator.state, segments, depth + 1)]
        if isinstance(value, type):
            if value in _BUILTIN_TYPES.values():
                return ["st", value.__name__]
            if issubclass(value, np.generic) and value.__module__ == "numpy":
                dtype = np.dtype(value)
                if dtype.kind in NUMERIC_KINDS:
                    return ["nt", dtype.str]
        return self.other(value, segments)

    def other(self, value: Any, segments: list[bytes]) -> Any:
        """A value that is not plain; subclasses send a reference or refuse."""
        raise TypeError(f"a {type(value).__name__} cannot travel")

    def decode(self, data: Any, segments: list[bytes], depth: int = 0) -> Any:
        """The value ``encode`` described, rebuilt from exact builtin types only."""
        if depth > MAX_DEPTH or type(data) is not list or not data or type(data[0]) is not str:
            raise ChannelBroken("bad value on the channel")
        tag, args = data[0], data[1:]
        if tag == "n":
            return None
        if tag in ("b", "i", "f", "s") and len(args) == 1:
            expected = {"b": bool, "i": int, "f": float, "s": str}[tag]
            value = args[0]
            if tag == "f" and type(value) is int:
                value = float(value)
            if type(value) is not expected:
                raise ChannelBroken(f"bad {tag!r} value")
            return value
        if tag == "x" and len(args) == 2 and all(type(a) in (int, float) for a in args):
            return complex(float(args[0]), float(args[1]))
        if tag == "y" and len(args) == 1 and type(args[0]) is int:
            if not 0 <= args[0] < len(segments):
                raise ChannelBroken("bad bytes segment")
            return bytes(segments[args[0]])
        if tag == "a" and len(args) == 3:
            return rebuild_array(*args, segments)
        if tag == "ns" and len(args) == 1 and type(args[0]) is list and args[0][:1] == ["a"]:
            array = rebuild_array(*args[0][1:], segments)
            if array.shape != ():
                raise ChannelBroken("a NumPy scalar must have shape ()")
            return array[()]
        if tag in ("l", "t") and len(args) == 1 and type(args[0]) is list:
            items = [self.decode(item, segments, depth + 1) for item in args[0]]
            return items if tag == "l" else tuple(items)
        if tag == "d" and len(args) == 1 and type(args[0]) is list:
            result = {}
            for pair in args[0]:
                if type(pair) is not list or len(pair) != 2:
                    raise ChannelBroken("bad dict entry")
                key = self.decode(pair[0], segments, depth + 1)
                try:
                    result[key] = self.decode(pair[1], segments, depth + 1)
                except TypeError:
                    raise ChannelBroken("unhashable dict key") from None
            return result
        if tag == "sl" and len(args) == 1 and type(args[0]) is list and len(args[0]) == 3:
            return slice(*(self.decode(p, segments, depth + 1) for p in args[0]))
        if tag == "e":
            return Ellipsis
        if tag in ("dt", "nt") and len(args) == 1:
            if type(args[0]) is not str or not _DTYPE.fullmatch(args[0]):
                raise ChannelBroken("bad dtype")
            dtype = np.dtype(args[0])
            return dtype if tag == "dt" else dtype.type
        if tag == "rng" and len(args) == 1:
            return _generator(self.decode(args[0], segments, depth + 1))
        if tag == "st" and len(args) == 1 and args[0] in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[args[0]]
        return self.tagged(tag, args, segments)

    def tagged(self, tag: str, args: list, segments: list[bytes]) -> Any:
        """A value of a side-specific tag; subclasses rebuild theirs."""
        raise ChannelBroken(f"unknown value tag {tag!r}")


def encode_call(
    codec: Codec, args: tuple, kwargs: dict, segments: list[bytes]
) -> tuple[list, list]:
    """Positional and keyword arguments as tagged JSON."""
    encoded_args = [codec.encode(a, segments) for a in args]
    encoded_kwargs = [[str(k), codec.encode(v, segments)] for k, v in kwargs.items()]
    return encoded_args, encoded_kwargs


def decode_call(codec: Codec, args: Any, kwargs: Any, segments: list[bytes]) -> tuple[list, dict]:
    """The arguments ``encode_call`` described."""
    if type(args) is not list or type(kwargs) is not list:
        raise ChannelBroken("bad call arguments")
    positional = [codec.decode(a, segments) for a in args]
    keywords = {}
    for pair in kwargs:
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
            raise ChannelBroken("bad keyword argument")
        keywords[pair[0]] = codec.decode(pair[1], segments)
    return positional, keywords


Handler = Callable[[dict, list[bytes]], tuple[dict, list[bytes]]]
