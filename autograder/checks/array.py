"""Checking one array the student computed against the one torch computed."""

from typing import Any

import numpy as np

from autograder.checks.compare import compare_arrays
from autograder.checks.display import report_pass


def check_array(what: str, got: Any, expected: Any, *, quiet: bool = False) -> None:
    """Assert that ``got`` (yours) matches ``expected`` (torch's, as NumPy) in shape, dtype, values.

    For results that are not a forward pass with gradients, such as ``unbroadcast``'s
    output or a ``.grad`` after two backward calls. Prints one line when they match.
    """
    __tracebackhide__ = True  # tracebacks show the student's code, not ours
    if hasattr(expected, "detach"):
        raise TypeError(
            f"check_array({what!r}): pass torch's result as NumPy (tensor.detach().cpu().numpy())"
        )
    compare_arrays(what, got, expected, device="cpu")
    if not quiet:
        report_pass(f"{what}: matches torch ({np.asarray(expected).dtype.name})")
