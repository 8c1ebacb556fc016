"""A finite-difference gradient check for the engine, like ``torch.autograd.gradcheck``.

Notebook 04 builds it: the Jacobian backward computes (one backward per output element)
against the Jacobian central differences estimate (two forwards per input element).
"""

from collections.abc import Callable

import numpy as np

from autograder.engine.grad_mode import no_grad
from autograder.engine.tensor import Tensor


# %% chunk: gradcheck
class GradcheckError(RuntimeError):
    """The analytical and numerical Jacobians differ (torch raises a class of this name)."""


def numerical_jacobian(fn: Callable, inputs: tuple, index: int, eps: float) -> np.ndarray:
    """d output / d inputs[index] by central differences; row k is input element k."""
    x = inputs[index].data  # perturbed in place, one element at a time, then restored
    with no_grad():
        size = fn(*inputs).data.size
        jacobian = np.zeros((x.size, size))
        for k, element in enumerate(np.ndindex(x.shape)):
            ### BEGIN SOLUTION
            original = x[element]
            x[element] = original + eps
            plus = fn(*inputs).data.reshape(-1).copy()
            x[element] = original - eps
            minus = fn(*inputs).data.reshape(-1).copy()
            x[element] = original
            jacobian[k] = (plus - minus) / (2 * eps)
            ### END SOLUTION
    return jacobian


def analytical_jacobian(fn: Callable, inputs: tuple, index: int) -> np.ndarray:
    """d output / d inputs[index] from backward, one output element at a time."""
    x = inputs[index]
    saved_grad = x.grad
    out = fn(*inputs)
    jacobian = np.zeros((x.data.size, out.data.size))
    for m in range(out.data.size):
        ### BEGIN SOLUTION
        x.grad = None
        seed = np.zeros_like(out.data)
        seed.reshape(-1)[m] = 1.0
        fn(*inputs).backward(seed)
        if x.grad is not None:
            jacobian[:, m] = x.grad.reshape(-1)
        ### END SOLUTION
    x.grad = saved_grad
    return jacobian


def gradcheck(
    fn: Callable,
    inputs: tuple,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when backward's Jacobian matches finite differences for every input needing grad."""
    for index, tensor in enumerate(inputs):
        if not (isinstance(tensor, Tensor) and tensor.requires_grad):
            continue
        numerical = numerical_jacobian(fn, inputs, index, eps)
        analytical = analytical_jacobian(fn, inputs, index)
        ### BEGIN SOLUTION
        if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {index},\n"
                f"numerical:{numerical}\nanalytical:{analytical}\n"
            )
        ### END SOLUTION
    return True
