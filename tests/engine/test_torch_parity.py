"""The given engine behaves as torch where a student can see it (issue 44, item 2).

Each case runs the same program in torch and in the reference engine (the engine later
notebooks hand out solved) and compares what a student would observe: a value, a gradient,
an error, a flag. Where the engine differs on purpose, the notebook's text says so, and the
test holds the text to that.
"""

import numpy as np
import pytest
import torch
from test_prose_claims import flat, prose

from autograder.engine.grad_mode import enable_grad, inference_mode, no_grad
from autograder.engine.tensor import Tensor


def backward_error(run) -> str | None:
    """The RuntimeError's message a program raises, or None when it runs through."""
    try:
        run()
    except RuntimeError as error:
        return str(error)
    return None


SAVING = {
    "an input saved (c * c)": lambda c: c * c,
    "an output saved (exp)": lambda c: c.exp(),
}


@pytest.mark.parametrize("saving", SAVING)
def test_detach_shares_the_version_counter_so_a_change_through_it_is_refused(saving):
    def run(c, detach_of_saved):
        y = SAVING[saving](c)
        detach_of_saved(c, y).add_(1)
        y.sum().backward()

    saved = (lambda c, y: c.detach()) if "input" in saving else (lambda c, y: y.detach())
    torch_error = backward_error(lambda: run(torch.ones(2, requires_grad=True), saved))
    engine_error = backward_error(lambda: run(Tensor(np.ones(2), requires_grad=True), saved))
    assert torch_error and "modified by an inplace operation" in torch_error
    assert engine_error and "modified by an inplace operation" in engine_error


def test_a_detached_tensor_sees_the_versions_of_the_original_and_the_original_sees_its_own():
    c = Tensor(np.ones(2))
    detached = c.detach()
    c.add_(1)
    assert (c._version, detached._version) == (1, 1)
    detached.mul_(2)
    assert (c._version, detached._version) == (2, 2)
    assert Tensor(np.ones(2))._version == 0  # a new tensor starts its own count


def test_inference_mode_records_nothing_even_under_enable_grad():
    a_torch = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        t_torch = torch.ones(2)
        with torch.enable_grad():
            y_torch = a_torch * 2.0
            z_torch = t_torch * a_torch  # would save an inference tensor if it recorded
    a = Tensor(np.ones(2), requires_grad=True)
    with inference_mode():
        t = Tensor(np.ones(2))
        with enable_grad():
            y = a * 2.0
            z = t * a
    for ours, theirs in ((y, y_torch), (z, z_torch)):
        assert ours.requires_grad == theirs.requires_grad is False
        assert (ours.grad_fn is None) == (theirs.grad_fn is None) is True
        assert ours.is_inference() == theirs.is_inference() is True


def test_enable_grad_inside_no_grad_still_records():
    a = Tensor(np.ones(2), requires_grad=True)
    with no_grad(), enable_grad():
        y = a * 2.0
    assert y.requires_grad and y.grad_fn is not None


@pytest.mark.parametrize("exponent", [0, 0.0])
def test_pow_zero_has_gradient_zero_everywhere_also_at_zero(exponent):
    values = np.array([0.0, 1.5, -2.0])
    x_torch = torch.tensor(values, requires_grad=True)
    (x_torch**exponent).sum().backward()
    x = Tensor(values.copy(), requires_grad=True)
    (x**exponent).sum().backward()
    np.testing.assert_array_equal(x.grad, x_torch.grad.numpy())
    assert not np.isnan(x.grad).any()


def test_pow_other_exponents_keep_torch_values_at_zero():
    for exponent in (2.0, 1.0, 3):
        x_torch = torch.zeros(2, dtype=torch.float64, requires_grad=True)
        (x_torch**exponent).sum().backward()
        x = Tensor(np.zeros(2), requires_grad=True)
        (x**exponent).sum().backward()
        np.testing.assert_array_equal(x.grad, x_torch.grad.numpy())


@pytest.mark.parametrize("op", ["mul", "div", "matmul"])
def test_operands_saved_where_torch_does_not_are_the_difference_the_text_names(op):
    """Torch saves an operand only when another gradient needs it; the engine saves both.

    The engine's refusal is the documented difference (05, pitfall 3): this test fails when
    either side changes, so the text cannot go stale.
    """
    apply = {"mul": lambda w, x: w * x, "div": lambda w, x: w / x, "matmul": lambda w, x: w @ x}

    def in_torch():
        w, x = torch.ones(2, 2, requires_grad=True), torch.ones(2, 2)
        y = apply[op](w, x)
        with torch.no_grad():
            w.add_(1)
        y.sum().backward()

    def in_engine():
        w, x = Tensor(np.ones((2, 2)), requires_grad=True), Tensor(np.ones((2, 2)))
        y = apply[op](w, x)
        with no_grad():
            w.add_(1)
        y.sum().backward()

    assert backward_error(in_torch) is None
    assert "modified by an inplace operation" in (backward_error(in_engine) or "")
    said = prose("05-common-pitfalls")
    assert "Your engine's `Mul`, `Div` and `MatMul` save both operands" in flat(said["en"])
    assert "`Mul`, `Div` y `MatMul` de tu motor guardan los dos operandos" in flat(said["es"])
