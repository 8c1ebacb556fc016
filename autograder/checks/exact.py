"""Read a value into a plain NumPy array of numbers before any verdict is taken on it.

A student's engine hands back arrays, NumPy scalars, Python numbers or objects of its own.
None of them is trusted to compare itself: an ndarray subclass may override ``__eq__`` or
``__array_ufunc__``, a float subclass may claim to equal anything. Every value is turned
into an exact ``numpy.ndarray`` (never a subclass) of a builtin numeric dtype, in native
byte order, and only NumPy's own code compares the copies.
"""

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

# bool, signed and unsigned integers, floats, complex: what torch and the engine compute.
NUMERIC_KINDS = "biufc"

# Stand-ins for values that live in another process (the grader's proxies for a student's
# objects, in its trusted kernel) register how to fetch their numbers by value. Nothing
# registers in a student's own kernel, where values are read as they are.
_fetchers: dict[type, Callable[[Any], Any]] = {}


def register_fetcher(kind: type, fetch: Callable[[Any], Any]) -> None:
    """Read values of ``kind`` (and subclasses) with ``fetch`` before any check reads them."""
    _fetchers[kind] = fetch


def plain_value(value: Any) -> Any:
    """``value`` itself, or, for a registered stand-in, its numbers fetched by value."""
    for kind, fetch in _fetchers.items():
        if issubclass(type(value), kind):
            return fetch(value)
    return value


def is_torch_tensor(value: Any) -> bool:
    """True for a torch.Tensor (or subclass) without importing torch; ``type`` cannot lie."""
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(type(value), torch.Tensor)


def exact_array(value: Any, name: str) -> np.ndarray:
    """A fresh base-class ndarray of builtin numeric dtype holding ``value``'s numbers.

    Raises TypeError naming ``name`` for a torch tensor, for a value NumPy cannot read,
    and for anything that is not numbers (object, string or structured arrays).
    """
    value = plain_value(value)
    if is_torch_tensor(value):
        raise TypeError(
            f"{name} is a torch.Tensor: pass NumPy arrays (tensor.detach().cpu().numpy())"
        )
    if issubclass(type(value), np.ndarray):
        # The base class's own method: a subclass's overrides are never consulted.
        array = np.ndarray.view(value, np.ndarray)
    else:
        try:
            array = np.asarray(value)
        except Exception as exc:
            raise TypeError(
                f"{name} cannot be read as a NumPy array ({type(exc).__name__}: {exc})"
            ) from None
        if type(array) is not np.ndarray:  # __array__ may hand back a subclass
            array = np.ndarray.view(array, np.ndarray)
    if array.dtype.kind not in NUMERIC_KINDS:
        raise TypeError(f"{name} has dtype {array.dtype}, not numbers")
    dtype = array.dtype if array.dtype.isnative else array.dtype.newbyteorder("=")
    # A C-contiguous copy: torch accepts it (no negative strides) and later writes to the
    # original cannot change what was compared.
    return np.array(array, dtype=dtype, order="C", copy=True)
