"""Tests for autograder.checks.compare: equal arrays pass, planted bugs are explained."""

import numpy as np
import pytest

from autograder.checks.array import check_array
from autograder.checks.compare import compare_arrays, format_array_diff, tolerances
from autograder.checks.text_table import read_columns

RNG = np.random.default_rng(0)


def failure(what, got, expected, **kwargs) -> str:
    """The AssertionError message compare_arrays raises (the test fails if it passes)."""
    kwargs.setdefault("device", "cpu")
    with pytest.raises(AssertionError) as info:
        compare_arrays(what, got, expected, **kwargs)
    message = str(info.value)
    assert message == message.strip(), "no leading/trailing noise in messages"
    return message


def grad_failure(name, got, expected, **kwargs) -> str:
    """The message for the gradient of input ``name``, as check_parity compares it."""
    return failure(f"grad of input {name!r}", got, expected, gradient=True, **kwargs)


@pytest.mark.parametrize(
    "dtype, expected",
    [
        (np.float64, (1e-10, 1e-12)),
        (np.float32, (1e-5, 1e-6)),
        (np.float16, (1e-3, 1e-3)),
        ("bfloat16", (1e-3, 1e-3)),
        (np.dtype("int64"), (0.0, 0.0)),
        (np.bool_, (0.0, 0.0)),
    ],
)
def test_tolerances_per_dtype(dtype, expected):
    assert tolerances(dtype) == expected


def test_tolerances_accept_torch_dtypes():
    torch = pytest.importorskip("torch")
    assert tolerances(torch.float32) == (1e-5, 1e-6)
    assert tolerances(torch.bfloat16) == (1e-3, 1e-3)


def test_tolerances_reject_non_numeric():
    with pytest.raises(TypeError, match="no comparison tolerances"):
        tolerances(object)


def test_equal_and_nearly_equal_arrays_pass():
    x = RNG.standard_normal((3, 4))
    compare_arrays("forward", x, x.copy(), device="cpu")
    compare_arrays("forward", x * (1 + 1e-12), x, device="cpu")  # inside float64 tolerance
    x32 = x.astype(np.float32)
    compare_arrays(
        "grad of input 'x'", x32 * np.float32(1 + 1e-7), x32, device="cpu", gradient=True
    )


def test_nan_at_the_same_place_counts_as_equal():
    x = np.array([1.0, np.nan, np.inf])
    compare_arrays("forward", x, x.copy(), device="cpu")


def test_both_none_is_a_match():
    compare_arrays("grad of input 'w'", None, None, device="cpu", gradient=True)


def test_wrong_shape_with_unbroadcast_hint():
    message = grad_failure(
        "b",
        np.ones((4, 3)),
        np.ones(3),
        input_shape=(3,),
        output_shape=(4, 3),
    )
    assert message.splitlines()[:3] == [
        "grad of input 'b' does not match torch (cpu, float64): wrong shape",
        "  expected shape (3,)   (torch)",
        "  got shape      (4, 3) (yours)",
    ]
    assert "hint: your gradient has the shape of the broadcast result" in message
    assert "unbroadcast" in message


def test_unbroadcast_hint_also_without_shapes_given():
    # A gradient that has the broadcast shape of the input's shape is recognised as such.
    message = grad_failure("b", np.ones((2, 4, 1)), np.ones((4, 1)))
    assert "unbroadcast" in message


def test_forward_with_broadcast_shape_gets_no_gradient_hint():
    message = failure("forward", np.ones((4, 3)), np.ones(3))
    assert "wrong shape" in message
    assert "unbroadcast" not in message


def test_transposed_non_square_gradient_hint():
    expected = RNG.standard_normal((2, 3))
    message = grad_failure("w", expected.T.copy(), expected)
    assert "wrong shape" in message
    assert "hint: looks transposed: check where a transpose is missing" in message


def test_size_one_dimension_hint():
    message = failure("forward", np.ones((3,)), np.ones((3, 1)))
    assert "size-1 dimensions" in message and "keepdims" in message


def test_scalar_gradient_of_a_reduction_hint():
    message = grad_failure("x", np.array(6.0), np.ones((2, 3)))
    assert "single number" in message


def test_wrong_dtype_with_promotion_hint():
    expected = np.ones(3, dtype=np.float32)
    message = failure("forward", expected.astype(np.float64), expected)
    lines = message.splitlines()
    assert lines[0] == "forward does not match torch (cpu, float32): wrong dtype"
    assert lines[1] == "  expected dtype float32 (torch)"
    assert lines[2] == "  got dtype      float64 (yours)"
    assert "float64 Python/NumPy constant" in message and "dtype=" in message


def test_dtype_is_checked_before_values():
    message = failure("forward", np.zeros(3, dtype=np.float32), np.ones(3))
    assert "wrong dtype" in message and "wrong values" not in message


def test_wrong_values_report_errors_worst_index_and_table():
    expected = np.arange(12.0).reshape(3, 4)
    got = expected.copy()
    got[1, 2] += 5.0  # the worst
    got[0, 0] += 1.0
    message = failure("forward", got, expected, device="cuda")
    lines = message.splitlines()
    assert lines[0] == "forward does not match torch (cuda, float64): wrong values"
    assert "2 of 12 elements differ (rtol=1e-10, atol=1e-12)" in lines[1]
    assert "max absolute error 5" in lines[2]
    assert "worst at index (1, 2)" in lines[2]
    header = ("index", "expected (torch)", "got (yours)", "abs error")
    assert read_columns(message) == [
        dict(zip(header, ("(1, 2)", "6.0", "11.0", "5"), strict=True)),
        dict(zip(header, ("(0, 0)", "0.0", "1.0", "1"), strict=True)),
    ]
    assert "hint" not in message  # no known pattern: no guess


def test_value_table_shows_at_most_five_rows():
    expected = np.arange(1.0, 21.0)
    got = expected + np.arange(20) * 0.25 + 1.0
    message = failure("forward", got, expected)
    table_rows = [line for line in message.splitlines() if line.startswith("  (")]
    assert len(table_rows) == 5
    assert table_rows[0].startswith("  (19,)")  # largest error first
    assert "... and 15 more" in message


def test_nan_where_torch_has_a_number():
    message = failure("forward", np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    assert "max absolute error nan" in message
    assert "NaN where torch's is a number" in message


def test_doubled_gradient_hint():
    expected = RNG.standard_normal((3, 3))
    message = grad_failure("w", 2 * expected, expected)
    assert "wrong values" in message
    assert "exactly twice torch's: gradients accumulate" in message
    assert "zero them between backward calls" in message


def test_doubled_forward_does_not_talk_about_accumulation():
    expected = RNG.standard_normal(4)
    message = failure("forward", 2 * expected, expected)
    assert "twice" in message and "accumulate" not in message


def test_the_gradient_flag_not_the_label_turns_on_the_gradient_hints():
    expected = RNG.standard_normal(4)
    assert "accumulate" in failure("result", 2 * expected, expected, gradient=True)
    assert "accumulate" not in failure("grad of input 'x'", 2 * expected, expected)


def test_check_array_reads_a_label_that_starts_with_grad_as_a_gradient():
    expected = RNG.standard_normal(4)
    assert "accumulate" in check_array_failure(2 * expected, expected, what="grad after two calls")
    assert "accumulate" not in check_array_failure(2 * expected, expected, what="a.grad twice")


def test_sign_flipped_hint():
    expected = RNG.standard_normal(5)
    message = grad_failure("x", -expected, expected)
    assert "the sign is flipped" in message


def test_transposed_square_gradient_hint():
    expected = RNG.standard_normal((3, 3))
    message = grad_failure("w", expected.T.copy(), expected)
    assert "wrong values" in message
    assert "looks transposed" in message


def test_all_zero_gradient_hint():
    message = grad_failure("x", np.zeros(4), RNG.standard_normal(4))
    assert "your gradient is all zeros" in message
    assert "graph disconnected" in message


def test_constant_factor_hint():
    expected = RNG.standard_normal(6)
    message = grad_failure("x", 3 * expected, expected)
    assert "times 3 everywhere" in message


def test_missing_gradient_message():
    message = grad_failure("w", None, np.ones(3))
    assert (
        "no gradient reached input 'w' (its .grad is None) but torch computed one: "
        "is requires_grad set, and does your backward visit every leaf?"
    ) in message


def test_unexpected_gradient_message():
    message = grad_failure("w", np.ones(3), None)
    assert "torch computed no gradient for input 'w'" in message


def test_format_array_diff_is_empty_when_close():
    x = RNG.standard_normal(3)
    assert format_array_diff(x, x, rtol=1e-10, atol=1e-12) == ""
    assert "1 of 3 elements differ" in format_array_diff(x + [0, 0, 1], x, rtol=0, atol=0)


def test_integer_arrays_compare_exactly():
    compare_arrays("forward", np.arange(3), np.arange(3), device="cpu")
    message = failure("forward", np.array([0, 1, 3]), np.arange(3))
    assert "1 of 3 elements differ" in message


# --- check_array: objects that lie, any layout, bad inputs ------------------------------

EXPECTED = np.array([1.0, 2.0, 3.0])


class EqualsEverything(np.ndarray):
    """Planted: an ndarray subclass whose comparisons, allclose and __array__ all lie."""

    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.ones(EXPECTED.shape, dtype=bool)

    def __array_function__(self, func, types, args, kwargs):
        return np.ones(EXPECTED.shape, dtype=bool)  # np.isclose, np.allclose... all "True"

    def __array__(self, dtype=None, copy=None):
        return EXPECTED.copy()

    def allclose(self, *args, **kwargs):
        return True


class FloatEqualsEverything(float):
    """Planted: a float subclass that claims to equal anything."""

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class ArrayOf:
    """An object that is read through __array__: it is what __array__ returns."""

    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return np.array(self.values)


def check_array_failure(got, expected=EXPECTED, what="x") -> str:
    with pytest.raises(AssertionError) as info:
        check_array(what, got, expected, quiet=True)
    return str(info.value)


def test_an_ndarray_subclass_is_judged_by_its_numbers():
    liar = np.zeros(3).view(EqualsEverything)
    assert "3 of 3 elements differ" in check_array_failure(liar)


def test_a_float_subclass_is_judged_by_its_value():
    message = check_array_failure(FloatEqualsEverything(5.0), np.float64(1.0))
    assert "wrong values" in message and "5.0" in message


def test_an_object_with_array_is_what_its_array_holds():
    check_array("x", ArrayOf([1.0, 2.0, 3.0]), EXPECTED, quiet=True)
    assert "wrong values" in check_array_failure(ArrayOf([1.0, 2.0, 4.0]))


def test_objects_that_are_not_numbers_fail():
    message = check_array_failure(np.array([FloatEqualsEverything(1.0)] * 3, dtype=object))
    assert message.startswith("x does not match torch: yours is not an array of numbers")


@pytest.mark.parametrize(
    "got",
    [EXPECTED[::-1].copy()[::-1], EXPECTED.astype(">f8"), np.repeat(EXPECTED, 2)[::2]],
    ids=["reversed", "big-endian", "strided"],
)
def test_every_layout_of_the_right_numbers_passes(got):
    check_array("x", got, EXPECTED, quiet=True)
    check_array("x", EXPECTED, got, quiet=True)


def test_check_array_names_the_unbroadcast_mistake():
    message = check_array_failure(np.ones((2, 3)), np.ones((2, 1)), what="unbroadcast to (2, 1)")
    assert message.splitlines()[-1] == (
        "  hint: yours has the shape torch's result broadcasts to: "
        "sum yours over axis 1 with keepdims=True to get (2, 1)"
    )


def test_unbroadcast_hint_names_leading_and_kept_axes():
    message = grad_failure("b", np.ones((4, 2, 3)), np.ones((2, 1)))
    assert "(sum yours over axes 0, 2, keeping axis 2 as size 1 to get (2, 1))" in message


def test_a_torch_tensor_that_requires_grad_is_named_not_crashed_on():
    torch = pytest.importorskip("torch")
    tensor = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(TypeError, match="x: yours is a torch.Tensor"):
        check_array("x", tensor, EXPECTED)
    with pytest.raises(TypeError, match="expected is a torch.Tensor"):
        check_array("x", EXPECTED, tensor)


@pytest.mark.parametrize(
    "what, expected, error, text",
    [
        (None, EXPECTED, TypeError, "what must be a non-empty string naming the result; got None"),
        ("x", None, TypeError, "check_array('x'): expected is None"),
        ("x", np.ones(0), ValueError, "expected has no elements, so nothing would be compared"),
        ("x", np.array(["a"]), TypeError, "expected has dtype <U1, not numbers"),
    ],
)
def test_check_array_bad_inputs_are_named(what, expected, error, text):
    with pytest.raises(error) as info:
        check_array(what, np.zeros(3), expected)
    assert text in str(info.value)
