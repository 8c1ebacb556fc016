"""A short expression evaluated where the student's objects live: the student's kernel.

A few facts exist only in the process that holds the objects: whether two arrays share
memory, whether an object is still alive, whether an attribute is still the same object.
In JupyterLab the test cells run in the student's kernel, so this is a plain ``eval``. At
grading time with trusted verdicts the test cells run in a separate trusted kernel, which
registers an evaluator here: the expression (instructor text) goes to the student's kernel
with the named values, and only its answer comes back, rebuilt as plain data.
"""

import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

# At most one: the trusted kernel's way of asking the student's kernel.
_evaluators: list[Callable[[str, dict[str, Any]], Any]] = []


def register_evaluator(evaluate: Callable[[str, dict[str, Any]], Any]) -> None:
    """Send later ``in_student_kernel`` questions through ``evaluate(expression, names)``."""
    _evaluators[:] = [evaluate]


def in_trusted_kernel() -> bool:
    """Whether this is the trusted kernel of a grading run (the student's objects elsewhere)."""
    return bool(_evaluators)


def evaluate_here(expression: str, names: dict[str, Any]) -> Any:
    """``expression`` evaluated with NumPy (np), weakref, types and ``names`` in scope."""
    namespace = {"np": np, "weakref": weakref, "types": types, **names}
    return eval(compile(expression, "<in_student_kernel>", "eval"), namespace)


def in_student_kernel(expression: str, **names: Any) -> Any:
    """The value of ``expression`` (with ``names`` bound) in the student's kernel."""
    if not isinstance(expression, str) or not expression.strip():
        raise TypeError(f"expression must be a non-empty string; got {expression!r}")
    if _evaluators:
        return _evaluators[0](expression, names)
    return evaluate_here(expression, names)
