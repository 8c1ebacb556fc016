"""Check that the student's engine behaves like torch beyond the numbers.

Two kinds of behaviour: how a misuse fails (``check_raises_like``: the same exception
class as torch, or no exception when torch raises none) and what autograd's bookkeeping
flags say (``check_flags``: requires_grad, is_leaf, whether .grad or .grad_fn is None).
"""

import re
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from autograder.checks.compare import format_table
from autograder.checks.display import FailureView, failure, report_pass, view_from_message

_MAX_MESSAGE = 160

# One line of explanation per flag, shown under the table when that flag disagrees.
FLAG_HINTS: dict[str, str] = {
    "requires_grad": "a result requires grad when any input of its operation does "
    "(while grad mode is on)",
    "is_leaf": "a tensor is a leaf when the user created it or it does not require grad",
    "grad is None": "only leaves that require grad get .grad after backward, "
    "unless retain_grad() was called",
    "grad_fn is None": "a result of an operation on tensors that require grad has a grad_fn; "
    "leaves have none",
}


class _Missing:
    """Marks a flag the engine's tensor does not have at all."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __str__(self) -> str:
        return f"missing (no .{self.attribute})"


def _describe(exc: BaseException) -> str:
    """ClassName('first line of the message'), short enough for one line."""
    lines = str(exc).strip().splitlines()
    message = lines[0] if lines else ""
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 3] + "..."
    return f"{type(exc).__name__}({message!r})"


def _builtin_class(exc: BaseException) -> type[BaseException]:
    # torch sometimes raises its own subclass of a builtin error (e.g. _LinAlgError is a
    # RuntimeError); a NumPy engine can only be asked for the builtin class behind it.
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return type(exc)


def _call(function: Callable[[], Any]) -> Exception | None:
    """Run a zero-argument callable and return what it raised, or None."""
    try:
        function()
    except Exception as exc:  # any error is a result here; KeyboardInterrupt still stops
        return exc
    return None


def _raises_failure(
    message: str, torch_exc: BaseException | None, engine_exc: BaseException | None
) -> AssertionError:
    """The AssertionError for ``message``; its display adds what each side raised, as a table."""

    def raised(exc: BaseException | None) -> str:
        return "nothing" if exc is None else _describe(exc)

    view = replace(
        view_from_message(message),
        facts=(),
        columns=("", "raises"),
        rows=(("torch", raised(torch_exc)), ("yours", raised(engine_exc))),
    )
    return failure(message, view)


def check_raises_like(
    engine_call: Callable[[], Any],
    torch_call: Callable[[], Any],
    *,
    what: str,
    match: str | None = None,
    quiet: bool = False,
) -> None:
    """Assert the engine fails (or succeeds) on a call the way torch does.

    If torch raises, the engine must raise the same (builtin) exception class, with a
    message matching the regex ``match`` when given; if torch raises nothing, neither may
    the engine. Teaches students to fail loudly, with the error torch users expect.
    """
    __tracebackhide__ = True  # tracebacks show the student's code, not ours
    if not callable(engine_call) or not callable(torch_call):
        raise TypeError("engine_call and torch_call must be zero-argument callables (lambdas)")
    label = f"'{what}'"
    torch_exc = _call(torch_call)
    engine_exc = _call(engine_call)

    if torch_exc is None:
        if engine_exc is not None:
            raise _raises_failure(
                f"{label}: torch raises nothing but yours raised {_describe(engine_exc)}\n"
                "  hint: this call is valid in torch; your engine should accept it too",
                torch_exc,
                engine_exc,
            ) from engine_exc
        if not quiet:
            report_pass(f"{label} raises nothing in both")
        return

    expected = _builtin_class(torch_exc)
    name = expected.__name__
    if engine_exc is None:
        raise _raises_failure(
            f"misuse {label}: torch raises {_describe(torch_exc)} but yours raised nothing\n"
            f"  hint: detect this case and raise {name} with a message saying what is wrong",
            torch_exc,
            engine_exc,
        )
    if not isinstance(engine_exc, expected):
        raise _raises_failure(
            f"misuse {label}: torch raises {_describe(torch_exc)} "
            f"but yours raised {_describe(engine_exc)}\n"
            f"  hint: raise {name} here, as torch does (an error from deeper inside, e.g. "
            "NumPy, is not a deliberate check)",
            torch_exc,
            engine_exc,
        ) from engine_exc
    if match is not None and not re.search(match, str(engine_exc), re.IGNORECASE):
        raise _raises_failure(
            f"misuse {label}: yours raises {name} as torch does, but its message does not "
            f"match /{match}/ (case-insensitive)\n"
            f"  yours: {_describe(engine_exc)}\n"
            f"  torch: {_describe(torch_exc)}\n"
            "  hint: say what went wrong in words close to torch's",
            torch_exc,
            engine_exc,
        ) from engine_exc
    if not quiet:
        report_pass(f"misuse {label} raises {name} in both")


def _resolve(value: Any) -> Any:
    # Zero-argument callables let a caller build the tensor lazily (after some backward).
    return value() if callable(value) else value


def _flag_value(tensor: Any, flag: str) -> Any:
    """Evaluate a flag: "X is None" means ``tensor.X is None``, anything else an attribute."""
    attribute = flag.removesuffix(" is None").strip()
    with warnings.catch_warnings():
        # torch warns when .grad of a non-leaf is read; here that read is the point.
        warnings.simplefilter("ignore")
        if not hasattr(tensor, attribute):
            return _Missing(attribute)
        value = getattr(tensor, attribute)
        if isinstance(value, types.MethodType | types.BuiltinMethodType):
            value = value()  # a method such as is_inference(): its answer is the flag
    return value is None if flag.endswith(" is None") else value


def _show(value: Any) -> str:
    if isinstance(value, _Missing):
        return str(value)
    if isinstance(value, bool | np.bool_):
        return str(bool(value))  # "True", not NumPy's "np.True_"
    return repr(value)


def _same(torch_value: Any, engine_value: Any) -> bool:
    if isinstance(engine_value, _Missing):
        return False
    try:
        return bool(torch_value == engine_value)
    except Exception:  # e.g. comparing arrays: not a flag we can judge, so it differs
        return False


def check_flags(
    engine_tensors: Mapping[str, Any],
    torch_tensors: Mapping[str, Any],
    *,
    flags: Iterable[str] = ("requires_grad", "is_leaf", "grad is None"),
    quiet: bool = False,
) -> None:
    """Assert each named engine tensor has the same autograd flags as its torch twin.

    Values may be tensors or zero-argument callables returning one. Every disagreement is
    reported at once, as a table, so a student sees the whole pattern.
    """
    __tracebackhide__ = True  # tracebacks show the student's code, not ours
    if not isinstance(engine_tensors, Mapping) or not isinstance(torch_tensors, Mapping):
        raise TypeError("engine_tensors and torch_tensors must be mappings name -> tensor")
    only_engine = [n for n in engine_tensors if n not in torch_tensors]
    only_torch = [n for n in torch_tensors if n not in engine_tensors]
    if only_engine or only_torch:
        raise ValueError(
            "engine_tensors and torch_tensors must name the same tensors; "
            f"only in engine_tensors: {only_engine}, only in torch_tensors: {only_torch}"
        )
    if not engine_tensors:
        raise ValueError("no tensors given: name at least one")
    flag_list = [flags] if isinstance(flags, str) else list(flags)
    if not flag_list or not all(isinstance(f, str) and f.strip() for f in flag_list):
        raise ValueError(f"flags must be non-empty strings; got {flags!r}")

    rows: list[tuple[str, str, str, str]] = []
    for name in engine_tensors:
        engine_tensor = _resolve(engine_tensors[name])
        torch_tensor = _resolve(torch_tensors[name])
        for flag in flag_list:
            torch_value = _flag_value(torch_tensor, flag)
            if isinstance(torch_value, _Missing):
                raise ValueError(f"unknown flag {flag!r}: torch tensors have no such attribute")
            engine_value = _flag_value(engine_tensor, flag)
            if not _same(torch_value, engine_value):
                rows.append((name, flag, _show(torch_value), _show(engine_value)))

    if rows:
        n_checks = len(engine_tensors) * len(flag_list)
        lines = [f"flags disagree with torch ({len(rows)} of {n_checks} checks):"]
        lines += format_table(("tensor", "flag", "torch", "yours"), rows)
        hints = []
        for flag in dict.fromkeys(row[1] for row in rows):  # each hint once, in table order
            hint = FLAG_HINTS.get(flag)
            if hint:
                lines.append(f"  hint ({flag}): {hint}")
                hints.append(f"({flag}) {hint}")
        view = FailureView(
            title=lines[0],
            columns=("tensor", "flag", "torch", "yours"),
            rows=tuple(rows),
            hints=tuple(hints),
        )
        raise failure("\n".join(lines), view)
    if not quiet:
        report_pass(
            f"flags {', '.join(flag_list)} agree with torch for {', '.join(engine_tensors)}"
        )
