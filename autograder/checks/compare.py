"""Compare one array from the student's engine with torch's, and explain any difference.

Checks run in the order a student should fix them: shape, then dtype, then values. Each
failure names what was compared, the device and dtype, shows the numbers and, when the
difference matches a classic autograd mistake, adds a one-line hint. Only NumPy is needed
here: the caller converts torch's result to NumPy first.

The caller says whether the array is a gradient (``gradient=True``), which turns on the
gradient-specific hints; the label ``what`` only names the array in messages.
"""

from typing import Any

import numpy as np

from autograder.checks.display import FailureView, failure
from autograder.checks.exact import exact_array, is_torch_tensor
from autograder.checks.language import number, tr
from autograder.checks.text_table import format_columns

Shape = tuple[int, ...]

# (rtol, atol) per floating dtype: loose enough for a different but valid order of
# operations, tight enough that a wrong rule cannot hide.
_FLOAT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-10, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-3, 1e-3),
}

MAX_TABLE_ROWS = 5


# Hints are functions: the checks' language (``tr``) is chosen after import.
def unbroadcast_hint() -> str:
    return tr(
        "your gradient has the shape of the broadcast result, not of the input: "
        "did you sum over the broadcast dimensions (unbroadcast)?"
    )


def transposed_hint() -> str:
    return tr("looks transposed: check where a transpose is missing (e.g. matmul backward)")


def zeros_hint() -> str:
    return tr(
        "your gradient is all zeros: is the backward rule returning zeros, "
        "or is the graph disconnected?"
    )


def doubled_grad_hint() -> str:
    return tr(
        "your gradient is exactly twice torch's: gradients accumulate: "
        "did you zero them between backward calls (or add a contribution twice)?"
    )


def promotion_hint() -> str:
    return tr(
        "a float64 Python/NumPy constant (e.g. np.float64(2.0)) or an array made without "
        "dtype= (np.ones, np.zeros and np.array default to float64) may have promoted the "
        "result: pass dtype=x.dtype when you create arrays"
    )


_GRAD_OF_INPUT = "grad of input "


def shown_label(what: str) -> str:
    """A compared value's name in the checks' language: "forward", "grad of input 'w'"."""
    if what == "forward":
        return tr("forward")
    if what.startswith(_GRAD_OF_INPUT):
        return tr("grad of input {name}", name=what.removeprefix(_GRAD_OF_INPUT))
    return what


def _dtype_name(dtype: Any) -> str:
    # Accept NumPy dtypes, scalar types, strings and torch dtypes (without importing torch).
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype).removeprefix("torch.")


def tolerances(dtype: Any) -> tuple[float, float]:
    """Return (rtol, atol) for comparing arrays of ``dtype``; integers and bools must be exact.

    Accepts a NumPy dtype or type, a name such as "bfloat16", or a torch dtype.
    """
    name = _dtype_name(dtype)
    if name in _FLOAT_TOLERANCES:
        return _FLOAT_TOLERANCES[name]
    try:
        kind = np.dtype(name).kind
    except TypeError:
        raise TypeError(f"no comparison tolerances for dtype {name!r}") from None
    if kind in "biu":
        return 0.0, 0.0
    if kind == "c":
        # A complex number is as precise as the float type of its parts.
        return _FLOAT_TOLERANCES["float64" if np.dtype(name).itemsize > 8 else "float32"]
    raise TypeError(f"no comparison tolerances for dtype {name!r}")


def _target(what: str) -> str:
    # "grad of input 'w'" -> "input 'w'", for sentences about the input itself.
    if what.startswith(_GRAD_OF_INPUT):
        return tr("input {name}", name=what.removeprefix(_GRAD_OF_INPUT))
    return shown_label(what.removeprefix("grad of "))


def _fmt_shape(shape: Shape) -> str:
    return str(tuple(int(n) for n in shape))


def _fmt_index(index: tuple[int, ...]) -> str:
    return str(tuple(int(i) for i in index))


def _pair_labels(kind: str) -> tuple[str, str]:
    """'expected shape' / 'got shape' (or dtype), in the checks' language."""
    if kind == "shape":
        return tr("expected shape"), tr("got shape")
    return tr("expected dtype"), tr("got dtype")


def _two_line_pair(kind: str, expected: str, got: str) -> list[str]:
    """Aligned 'expected X (torch)' / 'got X (yours)' lines."""
    width = max(len(expected), len(got))
    first, second = _pair_labels(kind)
    pad = max(len(first), len(second))
    torch_side, your_side = tr("(torch)"), tr("(yours)")
    return [
        f"  {first.ljust(pad)} {expected.ljust(width)} {torch_side}",
        f"  {second.ljust(pad)} {got.ljust(width)} {your_side}",
    ]


def _elementwise_close(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float):
    """Boolean array: np.isclose semantics, NaN equal to NaN at the same place."""
    if got.dtype.kind in "fciu" and expected.dtype.kind in "fciu":
        return np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    return np.asarray(got == expected)  # bools and anything else: exact


def _errors(got: np.ndarray, expected: np.ndarray, close: np.ndarray):
    """Absolute error, relative error and a worst-first ranking key, per element.

    NaN against NaN (or inf against the same inf) counts as no error; NaN against a number
    keeps NaN as its error, so the summary shows it, and ranks as the worst possible.
    """
    wide = np.complex128 if "c" in (got.dtype.kind, expected.dtype.kind) else np.float64
    g = got.astype(wide)
    e = expected.astype(wide)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_err = np.abs(g - e)
        abs_err = np.where(close & ~np.isfinite(abs_err), 0.0, abs_err)
        scale = np.abs(e)
        rel_err = np.where(scale > 0, abs_err / scale, np.where(abs_err == 0, 0.0, np.inf))
        # Ranking key: the absolute error, with NaN mismatches ranked worst of all.
        badness = np.where(np.isnan(abs_err), np.inf, abs_err)
    return abs_err, rel_err, badness


def diff_header() -> tuple[str, ...]:
    """The value table's columns."""
    return (tr("index"), tr("expected (torch)"), tr("got (yours)"), tr("abs error"))


def _diff_parts(
    got: Any, expected: Any, *, rtol: float, atol: float, max_rows: int = MAX_TABLE_ROWS
) -> tuple[list[str], list[tuple[str, ...]], str] | None:
    """(error-figure lines, worst-first table rows, "... and N more" or ""); None if close."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    close = _elementwise_close(got, expected, rtol, atol)
    bad = ~close
    n_bad = int(bad.sum())
    if n_bad == 0:
        return None
    abs_err, rel_err, badness = _errors(got, expected, close)
    # Worst first, among the elements outside their tolerance.
    bad_flat = np.flatnonzero(bad)
    order = bad_flat[np.argsort(-badness.ravel()[bad_flat], kind="stable")]
    indices = [np.unravel_index(i, got.shape) for i in order[:max_rows]]
    worst = indices[0]

    facts = [
        tr(
            "{n_bad} of {size} elements differ (rtol={rtol}, atol={atol})",
            n_bad=n_bad,
            size=got.size,
            rtol=f"{rtol:g}",
            atol=f"{atol:g}",
        ),
        tr(
            "max absolute error {abs_err}, max relative error {rel_err}, worst at index {index}",
            abs_err=number(float(abs_err.max()), ".3g"),
            rel_err=number(float(rel_err.max()), ".3g"),
            index=_fmt_index(worst),
        ),
    ]
    rows = [
        (_fmt_index(i), str(expected[i]), str(got[i]), f"{float(abs_err[i]):.3g}") for i in indices
    ]
    more = tr("... and {count} more", count=n_bad - len(rows)) if n_bad > len(rows) else ""
    return facts, rows, more


def _diff_text(facts: list[str], rows: list[tuple[str, ...]], more: str) -> str:
    lines = [f"  {fact}" for fact in facts] + format_columns(diff_header(), rows, indent="  ")
    if more:
        lines.append(f"  {more}")
    return "\n".join(lines)


def format_array_diff(
    got: Any, expected: Any, *, rtol: float, atol: float, max_rows: int = MAX_TABLE_ROWS
) -> str:
    """Describe how two same-shape arrays differ: error summary plus a worst-first table.

    Returns "" when every element is close; used by ``compare_arrays`` for its value report.
    """
    parts = _diff_parts(got, expected, rtol=rtol, atol=atol, max_rows=max_rows)
    return "" if parts is None else _diff_text(*parts)


def _shape_hint(
    is_grad: bool,
    got: np.ndarray,
    expected: np.ndarray,
    input_shape: Shape | None,
    output_shape: Shape | None,
) -> str | None:
    """The most likely reason for a shape mismatch, if one is recognisable."""
    summed = _broadcast_sum(got.shape, expected.shape)
    if (
        input_shape is not None
        and output_shape is not None
        and got.shape == tuple(output_shape) != tuple(input_shape)
    ):
        return f"{unbroadcast_hint()} ({summed})" if summed else unbroadcast_hint()
    if summed:
        # expected's shape stretches to got's: the broadcast dimensions were not summed.
        if is_grad:
            return f"{unbroadcast_hint()} ({summed})"
        return tr("yours has the shape torch's result broadcasts to: {how}", how=summed)
    if got.ndim == 2 and got.shape == expected.shape[::-1]:
        numeric = got.dtype.kind in "fciu" and expected.dtype.kind in "fciu"
        if numeric and _elementwise_close(got.T, expected, *tolerances(expected.dtype)).all():
            return transposed_hint()
        return tr(
            "your result has the transposed shape: check operand order and where a .T is missing"
        )
    if tuple(n for n in got.shape if n != 1) == tuple(n for n in expected.shape if n != 1):
        return tr("the shapes differ only in size-1 dimensions: check keepdims, or reshape back")
    if got.size == expected.size:
        return tr("same number of elements in a different shape: is a reshape missing or wrong?")
    if is_grad and got.size == 1:
        return tr(
            "your gradient is a single number: the backward of a reduction (sum/mean) must "
            "spread the gradient back to the input's shape"
        )
    return None


def _broadcast_sum(got: Shape, target: Shape) -> str | None:
    """How to sum an array of shape ``got`` back to ``target``, if ``target`` broadcasts to it.

    E.g. (2, 3) back to (2, 1): "sum yours over axis 1 with keepdims=True to get (2, 1)". None
    when ``target`` does not broadcast to ``got`` or the shapes are equal.
    """
    got, target = tuple(got), tuple(target)
    if got == target or len(target) > len(got):
        return None
    try:
        if np.broadcast_shapes(target, got) != got:
            return None
    except ValueError:
        return None
    lead = len(got) - len(target)
    dropped = list(range(lead))
    kept = [lead + i for i, n in enumerate(target) if n == 1 and got[lead + i] != 1]
    if not dropped and not kept:
        return None

    def axes(numbers: list[int]) -> str:
        listed = ", ".join(str(n) for n in numbers)
        if len(numbers) == 1:
            return tr("axis {numbers}", numbers=listed)
        return tr("axes {numbers}", numbers=listed)

    # One sum over the axes numbered as in yours (numbers shift after a first sum).
    shape = _fmt_shape(target)
    if kept and dropped:
        return tr(
            "sum yours over {axes}, keeping {kept} as size 1 to get {shape}",
            axes=axes(dropped + kept),
            kept=axes(kept),
            shape=shape,
        )
    if kept:
        return tr(
            "sum yours over {axes} with keepdims=True to get {shape}",
            axes=axes(dropped + kept),
            shape=shape,
        )
    return tr("sum yours over {axes} to get {shape}", axes=axes(dropped + kept), shape=shape)


def _dtype_hint(got: np.dtype, expected: np.dtype) -> str:
    if expected.kind == "f" and got == np.float64:
        return promotion_hint()
    if expected == np.float64 and got.kind == "f":
        return tr(
            "yours is {dtype} where torch keeps float64: is there an astype or dtype=?",
            dtype=got.name,
        )
    if expected.kind in "fc" and got.kind in "biu":
        return tr("yours is not floating point: was an integer array or integer division used?")
    return tr("the result should keep the dtype of the inputs, as torch does")


def _value_hint(is_grad: bool, got: np.ndarray, expected: np.ndarray, rtol: float, atol: float):
    """Recognise classic mistakes from how the values differ; None when nothing fits."""
    if got.dtype.kind not in "fc" or expected.dtype.kind not in "fc":
        return None

    def same(a: np.ndarray) -> bool:
        return bool(np.allclose(a, expected, rtol=rtol, atol=atol, equal_nan=True))

    nonzero = np.abs(expected) > atol
    if not nonzero.any():  # nothing to scale or flip: no pattern to recognise
        return None
    if np.isnan(got).any() and not np.isnan(expected[np.isnan(got)]).all():
        if is_grad:
            return tr(
                "your gradient has NaN where torch's is a number: look for 0/0, log(0) or "
                "inf - inf; rules written from the saved output (e.g. of exp, tanh, sigmoid) "
                "avoid them"
            )
        return tr(
            "your result has NaN where torch's is a number: look for 0/0, log(0) or "
            "inf - inf; rules written from the saved output (e.g. of exp, tanh, sigmoid) "
            "avoid them"
        )
    if not got.any():
        return zeros_hint() if is_grad else tr("your result is all zeros")
    if same(got / 2):
        if is_grad:
            return doubled_grad_hint()
        return tr("your result is exactly twice torch's: is something added twice?")
    if same(-got):
        if is_grad:
            return tr(
                "the sign is flipped: your gradient is minus torch's (check -, neg and div rules)"
            )
        return tr("the sign is flipped: your result is minus torch's (check -, neg and div rules)")
    if got.ndim == 2 and got.shape[0] == got.shape[1] and same(got.T):
        return transposed_hint()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = got[nonzero] / expected[nonzero]
    factor = ratios.flat[0]
    # One element always has "a constant factor": ask for two before saying so.
    if ratios.size >= 2 and np.isfinite(factor) and factor != 0 and same(got / factor):
        shown = number(factor, ".4g")
        if is_grad:
            return tr(
                "your gradient is torch's times {factor} everywhere: a constant factor is off "
                "(e.g. the exponent in d(x**n), or the 1/n of a mean)",
                factor=shown,
            )
        return tr(
            "your result is torch's times {factor} everywhere: a constant factor is off "
            "(e.g. the exponent in d(x**n), or the 1/n of a mean)",
            factor=shown,
        )
    return None


def compare_arrays(
    what: str,
    got: Any,
    expected: Any,
    *,
    device: str,
    gradient: bool = False,
    input_shape: Shape | None = None,
    output_shape: Shape | None = None,
) -> None:
    """Raise AssertionError, with a readable explanation, unless ``got`` matches ``expected``.

    ``got`` comes from the student's engine, ``expected`` from torch (as NumPy). Either may
    be None (a missing ``.grad``); both None counts as a match. ``gradient`` says they are
    gradients, whose mistakes get their own hints (unbroadcast, zeros, accumulation).
    ``input_shape`` and ``output_shape`` (of the input whose gradient this is, and of the
    broadcast result) let the message spot a missing unbroadcast.
    """
    __tracebackhide__ = True  # tracebacks show the student's code, not ours
    if got is None and expected is None:
        return
    if expected is not None:
        expected = exact_array(expected, f"expected value of {what!r} (torch's)")
    label = shown_label(what)
    if got is None:
        raise failure(
            tr(
                "{what} does not match torch ({device}, {dtype}): yours is None",
                what=label,
                device=device,
                dtype=expected.dtype.name,
            )
            + "\n  "
            + tr(
                "no gradient reached {target} (its .grad is None) but torch computed one: "
                "is requires_grad set, and does your backward visit every leaf?",
                target=_target(what),
            )
            + "\n  "
            + hint_line(
                tr(
                    "computing with .data (or NumPy functions on it) cuts the graph, "
                    "so no gradient flows back"
                )
            )
        )
    got = student_array(what, got)
    if expected is None:
        raise failure(
            tr(
                "{what} does not match torch ({device}): torch's is None",
                what=label,
                device=device,
            )
            + "\n  "
            + tr(
                "torch computed no gradient for {target} (its .grad is None) but yours "
                "has one of shape {shape}",
                target=_target(what),
                shape=_fmt_shape(got.shape),
            )
            + "\n  "
            + hint_line(
                tr(
                    "torch leaves .grad None when the output does not depend on that input "
                    "through differentiable operations (or it does not require grad)"
                )
            )
        )
    header = tr(
        "{what} does not match torch ({device}, {dtype})",
        what=label,
        device=device,
        dtype=expected.dtype.name,
    )

    if got.shape != expected.shape:
        lines = [header + ": " + tr("wrong shape")]
        lines += _two_line_pair("shape", _fmt_shape(expected.shape), _fmt_shape(got.shape))
        hint = _shape_hint(gradient, got, expected, input_shape, output_shape)
        if hint:
            lines.append(f"  {hint_line(hint)}")
        raise failure(
            "\n".join(lines), _pair_view(lines[0], tr("shape"), expected.shape, got.shape, hint)
        )

    if got.dtype != expected.dtype:
        lines = [header + ": " + tr("wrong dtype")]
        lines += _two_line_pair("dtype", expected.dtype.name, got.dtype.name)
        hint = _dtype_hint(got.dtype, expected.dtype)
        lines.append(f"  {hint_line(hint)}")
        raise failure(
            "\n".join(lines),
            _pair_view(lines[0], "dtype", expected.dtype.name, got.dtype.name, hint),
        )

    rtol, atol = tolerances(expected.dtype)
    parts = _diff_parts(got, expected, rtol=rtol, atol=atol)
    if parts is None:
        return
    lines = [header + ": " + tr("wrong values"), _diff_text(*parts)]
    hint = _value_hint(gradient, got, expected, rtol, atol)
    if hint:
        lines.append(f"  {hint_line(hint)}")
    facts, rows, more = parts
    view = FailureView(
        title=lines[0],
        facts=tuple(facts),
        columns=diff_header(),
        rows=tuple(rows),
        more=more,
        hints=(hint,) if hint else (),
    )
    raise failure("\n".join(lines), view)


def student_array(what: str, got: Any) -> np.ndarray:
    """``got`` as an exact NumPy array; a value that holds no numbers fails the check."""
    __tracebackhide__ = True
    if is_torch_tensor(got):
        raise TypeError(
            f"{what}: yours is a torch.Tensor, but it must come from your engine "
            "(a NumPy array); torch is only the reference"
        )
    try:
        return exact_array(got, "yours")
    except TypeError as exc:
        raise failure(
            tr(
                "{what} does not match torch: yours is not an array of numbers",
                what=shown_label(what),
            )
            + f"\n  {exc} ({type(got).__name__})\n  "
            + hint_line(tr("return NumPy arrays (or your engine's tensors' .data) of floats"))
        ) from None


def _pair_view(title: str, label: str, expected: Any, got: Any, hint: str | None) -> FailureView:
    """A two-row table, expected (torch) against got (yours), for a shape or a dtype."""
    if isinstance(expected, tuple):
        expected, got = _fmt_shape(expected), _fmt_shape(got)
    return FailureView(
        title=title,
        columns=("", label),
        rows=((tr("expected (torch)"), str(expected)), (tr("got (yours)"), str(got))),
        hints=(hint,) if hint else (),
    )


def hint_line(hint: str) -> str:
    """``hint: ...`` in the checks' language (the display reads hints by this prefix)."""
    return tr("hint") + f": {hint}"
