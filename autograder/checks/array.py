"""Checking one array the student computed against the one torch computed."""

from typing import Any

from autograder.checks.compare import compare_arrays, shown_label
from autograder.checks.display import report_pass
from autograder.checks.exact import exact_array, is_torch_tensor
from autograder.checks.language import tr


def names_a_gradient(what: str) -> bool:
    """A ``check_array`` label that starts with "grad" ("grad of x**0") names a gradient:
    its failures get the gradient hints. The label is all a notebook's check gives."""
    return what.startswith("grad")


def check_array(what: str, got: Any, expected: Any, *, quiet: bool = False) -> None:
    """Assert that ``got`` (yours) matches ``expected`` (torch's, as NumPy) in shape, dtype, values.

    For results that are not a forward pass with gradients, such as ``unbroadcast``'s
    output or a ``.grad`` after two backward calls. Prints one line when they match.
    Both are read into exact NumPy arrays first: no object's own comparison decides.
    A label that starts with "grad" marks a gradient (``names_a_gradient``).
    """
    __tracebackhide__ = True  # tracebacks show the student's code, not ours
    if not isinstance(what, str) or not what.strip():
        raise TypeError(
            f"check_array: what must be a non-empty string naming the result; got {what!r}"
        )
    if is_torch_tensor(expected):
        raise TypeError(
            f"check_array({what!r}): expected is a torch.Tensor: pass torch's result as NumPy "
            "(tensor.detach().cpu().numpy())"
        )
    if expected is None:
        raise TypeError(f"check_array({what!r}): expected is None: pass torch's result as NumPy")
    expected = exact_array(expected, f"check_array({what!r}): expected")
    if expected.size == 0:
        raise ValueError(
            f"check_array({what!r}): expected has no elements, so nothing would be compared"
        )
    compare_arrays(what, got, expected, device="cpu", gradient=names_a_gradient(what))
    if not quiet:
        report_pass(
            tr("{what}: matches torch ({dtype})", what=shown_label(what), dtype=expected.dtype.name)
        )
