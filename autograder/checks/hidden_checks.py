"""The hidden tests' checks, bound once to the notebook's tensor class.

Every hidden check compares the notebook's engine (its ``Tensor``) with torch, quietly: a
hidden test prints nothing when it passes. Made once, from the notebook's ``Tensor``, at the
top of a hidden-test block, it lets each hidden test read as one line (its ``parity`` or
``graph_like``) that calls the same check a visible test calls. (The block's own lines are
not quoted here: this module ships in the student kit, which must carry no hidden line.)
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from autograder.checks.graphs import check_graph_like
from autograder.checks.parity import ParityReport, check_parity


@dataclass(frozen=True)
class HiddenChecks:
    """``check_parity`` and ``check_graph_like`` with ``tensor_type`` given, and quiet."""

    tensor_type: type

    def parity(
        self, fn: Callable[..., Any], inputs: Mapping[str, Any], **options: Any
    ) -> ParityReport:
        """``check_parity(fn, inputs, tensor_type=..., quiet=True, **options)``."""
        __tracebackhide__ = True  # tracebacks show the test's line, not ours
        return check_parity(fn, inputs, tensor_type=self.tensor_type, quiet=True, **options)

    def graph_like(self, fn: Callable[..., Any], inputs: Mapping[str, Any], **options: Any) -> None:
        """``check_graph_like(fn, inputs, tensor_type=..., quiet=True, **options)``."""
        __tracebackhide__ = True
        check_graph_like(fn, inputs, tensor_type=self.tensor_type, quiet=True, **options)


def hidden_checks(tensor_type: type) -> HiddenChecks:
    """The hidden tests' checks on ``tensor_type``, the notebook's engine tensor class."""
    return HiddenChecks(tensor_type)
