"""Tests for autograder.checks.parity and .devices, against the reference engine.

Correct computations must pass; planted bugs (a wrong forward, an extra backward, a
gradient read back wrong, a graph cut with .data) must fail with a readable message.
"""

import numpy as np
import pytest
import torch

import autograder.checks.parity as parity
from autograder.checks.devices import DeviceStatus, tf32_disabled, torch_devices
from autograder.checks.parity import ParityReport, check_parity
from autograder.engine.tensor import Tensor

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 3))
B = RNG.standard_normal(3)
W = RNG.standard_normal((3, 3))


def planted_grad(transform):
    """An engine Tensor class whose .grad reads back transform(true gradient).

    Stands in for a student's wrong backward rule without touching the engine itself.
    """

    class PlantedGrad(Tensor):
        @property
        def grad(self):
            true_grad = self.__dict__.get("_true_grad")
            return None if true_grad is None else transform(true_grad)

        @grad.setter
        def grad(self, value):
            self.__dict__["_true_grad"] = value

    return PlantedGrad


def parity_failure(*args, **kwargs) -> str:
    """The AssertionError message of a check_parity call that must fail."""
    kwargs.setdefault("devices", ["cpu"])
    with pytest.raises(AssertionError) as info:
        check_parity(*args, **kwargs)
    message = str(info.value)
    assert message == message.strip()
    return message


# --- correct computations pass ---------------------------------------------------------


def test_product_sum_passes_and_prints_one_line(capsys):
    report = check_parity(lambda a, b: (a * b).sum(), {"a": A, "b": B}, tensor_type=Tensor)
    assert isinstance(report, ParityReport)
    assert "cpu" in report.devices_checked
    assert report.n_gradients == 2 and report.dtype == "float64"
    printed = capsys.readouterr().out
    assert printed == report.summary() + "\n"
    assert printed.startswith("forward and 2 gradients match torch on cpu")
    assert "(float64)" in printed


def test_skipped_cuda_is_named_in_the_summary(capsys):
    report = check_parity(lambda a: a.tanh(), {"a": A}, tensor_type=Tensor)
    line = capsys.readouterr().out.strip()
    assert "cuda" in line
    if torch.cuda.is_available():
        assert "cuda" in report.devices_checked
    else:
        assert ("cuda", "not available") in report.devices_skipped
        assert "cuda: not available, skipped" in line


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (lambda a, b: (a + b).relu(), {"a": A, "b": B}),  # broadcast, non-scalar output
        (lambda a, b: (a - b).exp().mean(), {"a": A, "b": B}),
        (lambda w, a: (a @ w).sigmoid(), {"w": W, "a": A}),  # random upstream gradient
        (lambda w: (w @ w.T).sum(), {"w": W}),
        (lambda a: (a * a).log().reshape(3, 4), {"a": A}),
        (lambda a, b: a / (b**2 + 1.0), {"a": A.astype(np.float32), "b": B.astype(np.float32)}),
    ],
)
def test_correct_computations_pass(fn, inputs):
    check_parity(fn, inputs, tensor_type=Tensor, quiet=True)


def test_scalar_and_integer_inputs():
    # A Python float becomes a 0-d float64 input; an integer input never requires grad.
    report = check_parity(
        lambda a, s, n: a * s + n, {"a": A, "s": 2.5, "n": np.arange(3)}, tensor_type=Tensor
    )
    assert report.n_gradients == 2


def test_no_gradient_wanted_checks_forward_only(capsys):
    report = check_parity(lambda a: a * 2.0, {"a": A}, tensor_type=Tensor, requires_grad=[])
    assert report.n_gradients == 0
    assert capsys.readouterr().out.startswith("forward matches torch on cpu (float64)")


def test_separate_torch_fn_and_quiet(capsys):
    report = check_parity(
        lambda a: a.sum(axis=0, keepdims=True),
        {"a": A},
        tensor_type=Tensor,
        torch_fn=lambda a: a.sum(dim=0, keepdim=True),
        quiet=True,
    )
    assert report.n_gradients == 1
    assert capsys.readouterr().out == ""


def test_devices_argument_limits_the_devices():
    report = check_parity(lambda a: a.exp(), {"a": A}, tensor_type=Tensor, devices=["cpu"])
    assert report.devices_checked == ["cpu"] and report.devices_skipped == []
    assert report.summary() == "forward and 1 gradient match torch on cpu (float64)"


def test_mps_is_skipped_for_float64(monkeypatch, capsys):
    fake = [DeviceStatus("cpu", True), DeviceStatus("mps", True)]
    monkeypatch.setattr(parity, "torch_devices", lambda: fake)
    report = check_parity(lambda a: a.exp(), {"a": A}, tensor_type=Tensor)
    assert report.devices_skipped == [("mps", "float64 not supported")]
    assert "mps: float64 not supported, skipped" in capsys.readouterr().out


# --- planted bugs fail with a readable message -------------------------------------------


def test_wrong_forward_value():
    message = parity_failure(
        lambda a: a * 2.0, {"a": A}, tensor_type=Tensor, torch_fn=lambda a: a * 3.0
    )
    assert message.startswith("forward does not match torch (cpu, float64): wrong values")
    assert "12 of 12 elements differ" in message
    assert "expected (torch)" in message and "got (yours)" in message


def test_wrong_forward_shape():
    message = parity_failure(
        lambda a: a.sum(axis=0),
        {"a": A},
        tensor_type=Tensor,
        torch_fn=lambda a: a.sum(dim=0, keepdim=True),
    )
    assert "forward does not match torch (cpu, float64): wrong shape" in message
    assert "expected shape (1, 3) (torch)" in message
    assert "keepdims" in message


def test_wrong_forward_dtype_from_a_float64_constant():
    # np.float64(2.0) promotes the engine's float32 array; torch treats it as a weak scalar.
    message = parity_failure(
        lambda a: a * np.float64(2.0), {"a": A.astype(np.float32)}, tensor_type=Tensor
    )
    assert "forward does not match torch (cpu, float32): wrong dtype" in message
    assert "got dtype      float64 (yours)" in message
    assert "dtype=" in message


def test_forward_must_return_an_engine_tensor():
    message = parity_failure(lambda a: a.data * 2, {"a": A}, tensor_type=Tensor)
    assert message == "forward: your function returned ndarray, expected a Tensor"


def test_wrong_gradient_values():
    message = parity_failure(
        lambda a, b: (a * b).sum(), {"a": A, "b": B}, tensor_type=planted_grad(lambda g: g + 0.1)
    )
    assert message.startswith("grad of input 'a' does not match torch (cpu, float64)")
    assert "wrong values" in message and "max absolute error 0.1" in message


def test_extra_backward_doubles_the_gradient():
    def loss_with_stray_backward(a, b):
        loss = (a * b).sum()
        # planted bug: a backward here, and nothing zeroes .grad after it
        loss.backward(retain_graph=True)
        return loss

    message = parity_failure(
        loss_with_stray_backward,
        {"a": A, "b": B},
        tensor_type=Tensor,
        torch_fn=lambda a, b: (a * b).sum(),
    )
    assert "grad of input 'a' does not match torch" in message
    assert "your gradient is exactly twice torch's: gradients accumulate" in message


def test_missing_unbroadcast():
    forgets_unbroadcast = planted_grad(lambda g: np.broadcast_to(g, A.shape).copy())
    message = parity_failure(
        lambda a, b: (a + b).sum(),
        {"a": A, "b": B},
        tensor_type=forgets_unbroadcast,
        requires_grad=["b"],
    )
    assert "grad of input 'b' does not match torch (cpu, float64): wrong shape" in message
    assert "got shape      (4, 3) (yours)" in message
    assert "did you sum over the broadcast dimensions (unbroadcast)?" in message


def test_transposed_gradient_with_random_upstream():
    # A comes from default_rng(0), like much notebook data: the upstream gradient must not.
    message = parity_failure(
        lambda w, a: a @ w,
        {"w": W, "a": A},
        tensor_type=planted_grad(lambda g: g.T.copy() if g.shape == (3, 3) else g),
    )
    assert "grad of input 'w'" in message
    assert "looks transposed" in message


def test_sign_flipped_gradient():
    message = parity_failure(lambda a: a.tanh(), {"a": A}, tensor_type=planted_grad(lambda g: -g))
    assert "the sign is flipped" in message


def test_gradient_dtype():
    message = parity_failure(
        lambda a: a.exp(),
        {"a": A.astype(np.float32)},
        tensor_type=planted_grad(lambda g: g.astype(np.float64)),
    )
    assert "grad of input 'a' does not match torch (cpu, float32): wrong dtype" in message


def test_graph_cut_by_data_gives_no_gradient():
    message = parity_failure(
        lambda a, b: (a * Tensor(b.data)).sum(),  # planted bug: .data leaves the graph
        {"a": A, "b": B},
        tensor_type=Tensor,
        torch_fn=lambda a, b: (a * b).sum(),
    )
    assert "no gradient reached input 'b' (its .grad is None) but torch computed one" in message
    assert "does your backward visit every leaf?" in message


def test_gradient_where_torch_has_none():
    message = parity_failure(
        lambda a, b: (a * b).sum(),
        {"a": A, "b": B},
        tensor_type=Tensor,
        torch_fn=lambda a, b: (a * b.detach()).sum(),
    )
    assert "torch computed no gradient for input 'b'" in message


def test_student_exceptions_propagate_unchanged():
    error = ZeroDivisionError("from the student's code")

    def broken(a):
        raise error

    with pytest.raises(ZeroDivisionError) as info:
        check_parity(broken, {"a": A}, tensor_type=Tensor, torch_fn=lambda a: a)
    assert info.value is error


def test_torch_side_exception_says_so():
    with pytest.raises(AttributeError) as info:
        check_parity(lambda a: a * 2.0, {"a": A}, tensor_type=Tensor, torch_fn=lambda a: a.nope())
    assert any("torch side" in note for note in info.value.__notes__)


# --- bad arguments are named ----------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"fn": 3}, TypeError, "fn must be callable"),
        ({"torch_fn": "a * b"}, TypeError, "torch_fn must be callable"),
        ({"inputs": [A, B]}, TypeError, "inputs must be a mapping"),
        ({"inputs": {}}, ValueError, "inputs is empty"),
        (
            {"inputs": {"w": torch.ones(3)}},
            TypeError,
            "input 'w' is a torch.Tensor: pass NumPy arrays; the helper builds both the engine "
            "tensor and the torch tensor from them",
        ),
        ({"inputs": {"w": Tensor(B)}}, TypeError, "input 'w' is already a Tensor: pass NumPy"),
        ({"inputs": {"w": np.array(["x"])}}, TypeError, "input 'w' has dtype <U1"),
        ({"tensor_type": Tensor(B)}, TypeError, "tensor_type must be your engine's tensor class"),
        ({"requires_grad": ["a", "q"]}, ValueError, "requires_grad names unknown input 'q'"),
        ({"devices": ["tpu"]}, ValueError, "unknown device 'tpu'"),
        ({"devices": []}, ValueError, "devices is empty, so nothing would be compared"),
        ({"gradient_seed": 1.5}, TypeError, "gradient_seed must be an integer; got float 1.5"),
        ({"gradient_seed": True}, TypeError, "gradient_seed must be an integer; got bool"),
        ({"gradient_seed": -1}, ValueError, "gradient_seed must be non-negative; got -1"),
        ({"requires_grad": True}, TypeError, "requires_grad must name inputs"),
        ({"inputs": {"w": np.ones((2, 0))}}, ValueError, "input 'w' has no elements"),
        (
            {"inputs": {"w": torch.ones(3, requires_grad=True)}},
            TypeError,
            "input 'w' is a torch.Tensor: pass NumPy arrays",
        ),
    ],
)
def test_bad_arguments(kwargs, error, text):
    arguments = {"fn": lambda *xs: xs[0], "inputs": {"a": A}, "tensor_type": Tensor}
    arguments.update(kwargs)
    fn = arguments.pop("fn")
    inputs = arguments.pop("inputs")
    with pytest.raises(error) as info:
        check_parity(fn, inputs, quiet=True, **arguments)
    assert text in str(info.value)


def test_integer_input_cannot_require_grad():
    with pytest.raises(ValueError, match="input 'n' has dtype int64 and cannot require grad"):
        check_parity(
            lambda a, n: a * n, {"a": A, "n": np.arange(3)}, tensor_type=Tensor, requires_grad="n"
        )


# --- devices ----------------------------------------------------------------------------


def test_torch_devices_lists_cpu_and_cuda():
    statuses = {s.name: s for s in torch_devices()}
    assert statuses["cpu"] == DeviceStatus("cpu", True, "")
    assert statuses["cuda"].available == torch.cuda.is_available()
    if not torch.cuda.is_available():
        assert statuses["cuda"].reason == "not available"
    # mps is listed exactly where this torch build was made with it (macOS).
    assert ("mps" in statuses) == torch.backends.mps.is_built()


def test_tf32_disabled_restores_previous_settings():
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        with tf32_disabled():
            assert torch.backends.cuda.matmul.allow_tf32 is False
            assert torch.backends.cudnn.allow_tf32 is False
        assert torch.backends.cuda.matmul.allow_tf32 is True
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


# --- nothing compared, any layout, objects that lie --------------------------------------


def test_an_explicit_but_unavailable_device_alone_fails(monkeypatch):
    # Planted machine without CUDA: a wrong engine must not pass by comparing nothing.
    monkeypatch.setattr(parity, "torch_devices", lambda: [DeviceStatus("cpu", True)])
    with pytest.raises(AssertionError) as info:
        check_parity(
            lambda a: a * 3.0,
            {"a": A},
            tensor_type=Tensor,
            torch_fn=lambda a: a * 2.0,
            devices=["cuda"],
        )
    message = str(info.value)
    assert message.startswith(
        "nothing compared with torch: no requested device could run (cuda: not available)"
    )
    assert "leave devices=None" in message


def test_an_unavailable_device_beside_cpu_is_a_named_skip(monkeypatch, capsys):
    monkeypatch.setattr(parity, "torch_devices", lambda: [DeviceStatus("cpu", True)])
    report = check_parity(lambda a: a.exp(), {"a": A}, tensor_type=Tensor, devices=["cpu", "cuda"])
    assert report.devices_checked == ["cpu"]
    assert report.devices_skipped == [("cuda", "not available")]
    assert "cuda: not available, skipped" in capsys.readouterr().out


def test_default_devices_always_compare_on_cpu(monkeypatch):
    fake = [DeviceStatus("cpu", True), DeviceStatus("cuda", False, "not available")]
    monkeypatch.setattr(parity, "torch_devices", lambda: fake)
    report = check_parity(lambda a: a.exp(), {"a": A}, tensor_type=Tensor, quiet=True)
    assert report.devices_checked == ["cpu"]


@pytest.mark.parametrize(
    "layout",
    [
        lambda a: a[::-1],
        lambda a: a[:, ::-2],
        lambda a: a.T,
        lambda a: np.asfortranarray(a),
        lambda a: a.astype(">f8"),
        lambda a: np.broadcast_to(a[:1], a.shape),
    ],
    ids=["reversed", "reversed-strided", "transposed", "fortran", "big-endian", "broadcast"],
)
def test_every_valid_input_layout_is_accepted(layout):
    weird = layout(A)
    report = check_parity(
        lambda a: (a * a).tanh().sum(), {"a": weird}, tensor_type=Tensor, quiet=True
    )
    assert report.n_gradients == 1
    # The engine saw the same numbers torch did: a wrong rule still fails on such input.
    with pytest.raises(AssertionError, match="wrong values"):
        check_parity(
            lambda a: (a * a).tanh().sum(),
            {"a": weird},
            tensor_type=Tensor,
            torch_fn=lambda a: (a * a).sum(),
            devices=["cpu"],
        )


class ClaimsToMatch(np.ndarray):
    """Planted engine data: an ndarray subclass whose comparisons say "all equal"."""

    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)

    def __array_function__(self, func, types, args, kwargs):
        return True

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.ones(self.shape, dtype=bool)


def lying_output(data_of):
    """fn for check_parity: returns a Tensor whose .data reads back data_of(a's data)."""

    class LyingData(Tensor):
        @property
        def data(self):
            return data_of(self.__dict__["_true_data"])

        @data.setter
        def data(self, value):
            self.__dict__["_true_data"] = value

    return lambda a: LyingData(np.array(a.data))


def test_forward_data_that_claims_to_match_is_judged_by_its_numbers():
    fn = lying_output(lambda data: (data + 1.0).view(ClaimsToMatch))
    message = parity_failure(fn, {"a": A}, tensor_type=Tensor, torch_fn=lambda a: a * 1.0)
    assert message.startswith("forward does not match torch (cpu, float64): wrong values")


def test_forward_data_that_is_not_numbers_fails():
    fn = lying_output(lambda data: [object()])
    message = parity_failure(fn, {"a": A}, tensor_type=Tensor, torch_fn=lambda a: a * 1.0)
    assert message.startswith("forward does not match torch: yours is not an array of numbers")


def test_a_gradient_that_claims_to_match_is_judged_by_its_numbers():
    message = parity_failure(
        lambda a: (a * a).sum(),
        {"a": A},
        tensor_type=planted_grad(lambda g: (2.0 * g).view(ClaimsToMatch)),
    )
    assert "grad of input 'a' does not match torch" in message and "wrong values" in message
