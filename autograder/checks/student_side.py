"""A short expression evaluated where the student's objects live: the student's kernel.

A few facts exist only in the process that holds the objects: whether two arrays share
memory, whether an object is still alive, whether an attribute is still the same object.
In JupyterLab the test cells run in the student's kernel, so this is a plain ``eval``. At
grading time with trusted verdicts the test cells run in a separate trusted kernel, which
registers an evaluator here: the expression (instructor text) goes to the student's kernel
with the named values, and only its answer comes back, rebuilt as plain data. It registers
a lender too: a check that lends the reference's parts there lends them to a copy of the
student's kernel, never to the kernel itself (``autograder.checks.given``).
"""

import gc
import types
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np

# At most one: the trusted kernel's way of asking the student's kernel.
_evaluators: list[Callable[[str, dict[str, Any]], Any]] = []


def register_evaluator(evaluate: Callable[[str, dict[str, Any]], Any]) -> None:
    """Send later ``in_student_kernel`` questions through ``evaluate(expression, names)``."""
    _evaluators[:] = [evaluate]


# lender(parts, checked): a block where the reference's parts are lent
Lender = Callable[[Iterable[str], Iterable[str]], AbstractContextManager]
# At most one: the trusted kernel's way of lending to a copy of the student's kernel.
_lenders: list[Lender] = []


def register_lender(lender: Lender) -> None:
    """Lend later (``lending(parts, checked)``) to what ``lender(parts, checked)`` opens: in
    the trusted kernel, a copy of the student's kernel."""
    _lenders[:] = [lender]


def unregister_trusted_side() -> None:
    """Forget the registered evaluator and lender: this kernel is no trusted kernel again."""
    _evaluators.clear()
    _lenders.clear()


@contextmanager
def lending(parts: Iterable[str], checked: Iterable[str] = ()) -> Iterator[None]:
    """Around a lending of the reference's ``parts`` (``checked``: the parts under test,
    never lent): the trusted kernel's lender's block, else nothing to do."""
    if not _lenders:
        yield
        return
    with _lenders[0](parts, checked):
        yield


def in_trusted_kernel() -> bool:
    """Whether this is the trusted kernel of a grading run (the student's objects elsewhere)."""
    return bool(_evaluators)


def evaluate_here(expression: str, names: dict[str, Any]) -> Any:
    """``expression`` evaluated with NumPy (np), gc, weakref, types and ``names`` in scope."""
    namespace = {"np": np, "gc": gc, "weakref": weakref, "types": types, **names}
    return eval(compile(expression, "<in_student_kernel>", "eval"), namespace)


def in_student_kernel(expression: str, **names: Any) -> Any:
    """The value of ``expression`` (with ``names`` bound) in the student's kernel."""
    if not isinstance(expression, str) or not expression.strip():
        raise TypeError(f"expression must be a non-empty string; got {expression!r}")
    if _evaluators:
        return _evaluators[0](expression, names)
    return evaluate_here(expression, names)


def live_instances(cls: type) -> int:
    """How many instances of ``cls`` are alive in the student's kernel after a collection.

    Counted there, where the engine's objects live: a trusted kernel's own garbage holds
    only proxies, some of them of objects a copy made and took with it when it ended.
    """
    # issubclass(type(...)): isinstance would also read each object's __class__, which lazy
    # modules answer with a deprecation warning printed into the student's feedback.
    count = in_student_kernel(
        "(gc.collect(), sum(issubclass(type(thing), cls) for thing in gc.get_objects()))[1]",
        cls=cls,
    )
    if type(count) is not int:
        raise TypeError(f"the kernel counted {count!r} live {cls.__name__} objects: not an int")
    return count
