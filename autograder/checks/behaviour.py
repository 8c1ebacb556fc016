"""Check that the student's engine behaves like torch beyond the numbers.

Two kinds of behaviour: how a misuse fails (``check_raises_like``: the same exception
class as torch, or no exception when torch raises none) and what autograd's bookkeeping
flags say (``check_flags``: requires_grad, is_leaf, whether .grad or .grad_fn is None).
"""

import functools
import re
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from autograder.checks.compare import hint_line
from autograder.checks.display import FailureView, failure, report_pass, view_from_message
from autograder.checks.exact import is_torch_tensor
from autograder.checks.language import marked, tr, translated
from autograder.checks.text_table import format_columns

_MAX_MESSAGE = 160

# One line of explanation per flag, shown under the table when that flag disagrees.
# English, marked for the catalog; shown through tr().
FLAG_HINTS: dict[str, str] = {
    "requires_grad": marked(
        "a result requires grad when any input of its operation does (while grad mode is on)"
    ),
    "is_leaf": marked("a tensor is a leaf when the user created it or it does not require grad"),
    "grad is None": marked(
        "only leaves that require grad get .grad after backward, unless retain_grad() was called"
    ),
    "grad_fn is None": marked(
        "a result of an operation on tensors that require grad has a grad_fn; leaves have none"
    ),
    "retains_grad": marked(
        "retain_grad() changes nothing on a leaf (it keeps its .grad anyway): only a non-leaf "
        "gets retains_grad=True"
    ),
}


NOT_A_BOOL_HINT = marked("a flag is True or False (a bool), as torch's is")


class _Missing:
    """Marks a flag the engine's tensor does not have at all."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __str__(self) -> str:
        return tr("missing (no .{attribute})", attribute=self.attribute)


class _NotBool:
    """Marks a flag whose value is not an exact bool; only its type's name is kept."""

    def __init__(self, value: Any) -> None:
        try:
            self.type_name = str(type(value).__name__)
        except Exception:  # a metaclass could make even the name misbehave
            self.type_name = "object"

    def __str__(self) -> str:
        return tr("not a bool ({type_name})", type_name=self.type_name)


def _describe(exc: BaseException) -> str:
    """ClassName('first line of the message'), short enough for one line."""
    lines = _message(exc).strip().splitlines()
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
    title: str, hint: str, torch_exc: BaseException | None, engine_exc: BaseException | None
) -> AssertionError:
    """The AssertionError for ``title`` and its hint; its display adds what each side raised,
    as a table."""
    message = title + "\n  " + hint_line(hint)

    def raised(exc: BaseException | None) -> str:
        return tr("nothing") if exc is None else _describe(exc)

    view = replace(
        view_from_message(message),
        facts=(),
        columns=("", tr("raises")),
        rows=(("torch", raised(torch_exc)), (tr("yours"), raised(engine_exc))),
    )
    return failure(message, view)


def _compile_match(match: Any) -> re.Pattern[str] | None:
    """``match`` compiled (case-insensitive), or a clear error naming it."""
    if match is None:
        return None
    if not isinstance(match, str):
        raise TypeError(f"match must be a regular expression string or None; got {match!r}")
    try:
        return re.compile(match, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"match {match!r} is not a valid regular expression: {exc}") from None


def _message(exc: BaseException) -> str:
    """The exception's message as an exact str (a rigged ``__str__`` may return anything)."""
    try:
        text = str(exc)
    except Exception:
        return ""
    return str.__str__(text) if isinstance(text, str) else ""


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
    if not isinstance(what, str) or not what.strip():
        raise TypeError(f"what must be a non-empty string naming the misuse; got {what!r}")
    pattern = _compile_match(match)
    label = f"'{what}'"
    torch_exc = _call(torch_call)
    engine_exc = _call(engine_call)

    if torch_exc is None:
        if engine_exc is not None:
            raise _raises_failure(
                tr(
                    "{label}: torch raises nothing but yours raised {raised}",
                    label=label,
                    raised=_describe(engine_exc),
                ),
                tr("this call is valid in torch; your engine should accept it too"),
                torch_exc,
                engine_exc,
            ) from engine_exc
        if not quiet:
            report_pass(tr("{label} raises nothing in both", label=label))
        return

    expected = _builtin_class(torch_exc)
    name = expected.__name__
    if isinstance(engine_exc, NotImplementedError) and not issubclass(
        expected, NotImplementedError
    ):  # the stub's error: a subclass of RuntimeError, never the deliberate check torch makes
        raise _raises_failure(
            tr(
                "misuse {label}: yours raised NotImplementedError: a cell it runs is not "
                "written yet (torch raises {raised})",
                label=label,
                raised=_describe(torch_exc),
            ),
            tr("write the cells marked # YOUR CODE HERE that this check runs first"),
            torch_exc,
            engine_exc,
        ) from engine_exc
    if engine_exc is None:
        raise _raises_failure(
            tr(
                "misuse {label}: torch raises {raised} but yours raised nothing",
                label=label,
                raised=_describe(torch_exc),
            ),
            tr(
                "detect this case and raise {name} with a message saying what is wrong",
                name=name,
            ),
            torch_exc,
            engine_exc,
        )
    if not issubclass(type(engine_exc), expected):  # type(): __class__ can be faked
        raise _raises_failure(
            tr(
                "misuse {label}: torch raises {theirs} but yours raised {yours}",
                label=label,
                theirs=_describe(torch_exc),
                yours=_describe(engine_exc),
            ),
            tr(
                "raise {name} here, as torch does (an error from deeper inside, e.g. "
                "NumPy, is not a deliberate check)",
                name=name,
            ),
            torch_exc,
            engine_exc,
        ) from engine_exc
    if pattern is not None and not pattern.search(_message(engine_exc)):
        raise _raises_failure(
            tr(
                "misuse {label}: yours raises {name} as torch does, but its message does not "
                "match /{match}/ (case-insensitive)",
                label=label,
                name=name,
                match=match,
            )
            + "\n  "
            + tr("yours")
            + f": {_describe(engine_exc)}\n  torch: {_describe(torch_exc)}",
            tr("say what went wrong in words close to torch's"),
            torch_exc,
            engine_exc,
        ) from engine_exc
    if not quiet:
        report_pass(tr("misuse {label} raises {name} in both", label=label, name=name))


# What a caller may pass to build a tensor lazily (after some backward). A callable object
# of any other kind may be the student's tensor itself, which is inspected, never called.
_LAZY_TYPES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType)


def _resolve(value: Any) -> Any:
    """The tensor itself, or what a function or lambda given in its place returns."""
    if isinstance(value, _LAZY_TYPES) or type(value) is functools.partial:
        return value()
    return value


def _exact_bool(value: Any) -> Any:
    """``value`` as a Python bool if it is exactly a bool (or NumPy bool), else _NotBool.

    Neither ``__eq__`` nor ``__bool__`` of the object is consulted: only its type.
    """
    if type(value) is bool:
        return value
    if type(value) is np.bool_:
        return bool(value)
    return _NotBool(value)


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
    return value is None if flag.endswith(" is None") else _exact_bool(value)


def _show(value: Any) -> str:
    """A flag's value for the table: its markers' text, or True/False."""
    return str(value)  # only bools and the two markers get here


def _same(torch_value: bool, engine_value: Any) -> bool:
    """Equal as exact bools; a missing or non-bool engine flag never agrees."""
    return type(engine_value) is bool and engine_value is torch_value


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
    not_bools: list[Any] = []
    for name in engine_tensors:
        engine_tensor = _resolve(engine_tensors[name])
        torch_tensor = _resolve(torch_tensors[name])
        if is_torch_tensor(engine_tensor):
            raise TypeError(
                f"engine tensor {name!r} is a torch.Tensor: pass your engine's tensor, so that "
                "its flags are compared with torch's"
            )
        for flag in flag_list:
            torch_value = _flag_value(torch_tensor, flag)
            if isinstance(torch_value, _Missing):
                raise ValueError(f"unknown flag {flag!r}: torch tensors have no such attribute")
            if isinstance(torch_value, _NotBool):
                raise ValueError(
                    f"flag {flag!r} is not a bool in torch ({torch_value.type_name}): "
                    "check_flags compares true/false flags only"
                )
            engine_value = _flag_value(engine_tensor, flag)
            if not _same(torch_value, engine_value):
                not_bools.append(engine_value)
                rows.append((name, flag, _show(torch_value), _show(engine_value)))

    if rows:
        n_checks = len(engine_tensors) * len(flag_list)
        lines = [
            tr(
                "flags disagree with torch ({count} of {total} checks):",
                count=len(rows),
                total=n_checks,
            )
        ]
        columns = (tr("tensor"), tr("flag"), "torch", tr("yours"))
        lines += format_columns(columns, rows, indent="  ")
        hints = []
        for flag in dict.fromkeys(row[1] for row in rows):  # each hint once, in table order
            hint = FLAG_HINTS.get(flag)
            if hint:
                lines.append("  " + tr("hint") + f" ({flag}): {translated(hint)}")
                hints.append(f"({flag}) {translated(hint)}")
        if any(type(value) is _NotBool for value in not_bools):
            lines.append(f"  {hint_line(translated(NOT_A_BOOL_HINT))}")
            hints.append(translated(NOT_A_BOOL_HINT))
        view = FailureView(
            title=lines[0],
            columns=columns,
            rows=tuple(rows),
            hints=tuple(hints),
        )
        raise failure("\n".join(lines), view)
    if not quiet:
        report_pass(
            tr(
                "flags {flags} agree with torch for {names}",
                flags=", ".join(flag_list),
                # quoted: a tensor named y must not read as Spanish "and"
                names=", ".join(f"'{name}'" for name in engine_tensors),
            )
        )
