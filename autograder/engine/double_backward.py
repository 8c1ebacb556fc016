"""Second derivatives: a twice-differentiable op and Hessian-vector products (notebook 07)."""

from collections.abc import Callable

import numpy as np

from autograder.engine.tensor import Function, Tensor


# %% chunk: sqrt
class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        ### BEGIN SOLUTION
        out = np.sqrt(a)
        ctx.save_for_backward(out)
        return out
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        # With create_graph=True, ctx.saved_tensors gives the output as a Tensor, so this
        # rule, written with operators only, is itself recorded and can be differentiated.
        ### BEGIN SOLUTION
        (out,) = ctx.saved_tensors
        return (grad / (2.0 * out),)
        ### END SOLUTION


def sqrt(x: Tensor) -> Tensor:
    """Elementwise square root of a Tensor, differentiable twice."""
    return Sqrt.apply(x)


# %% chunk: hvp
def hvp(f: Callable, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(f(x), H v) for a scalar f, like ``torch.autograd.functional.hvp``.

    Differentiate once with ``create_graph=True`` to get the gradient as a graph, then
    differentiate <gradient, v> again. H is never formed.
    """
    ### BEGIN SOLUTION
    x_tensor = Tensor(np.asarray(x), requires_grad=True)
    out = f(x_tensor)
    out.backward(create_graph=True)
    gradient, x_tensor.grad = x_tensor.grad, None
    if not gradient.requires_grad:
        # The gradient does not depend on x, so its derivative is zero; torch's hvp
        # (strict=False) says the same.
        return out.data, np.zeros_like(x_tensor.data)
    (gradient * Tensor(np.asarray(v))).sum().backward()
    return out.data, x_tensor.grad
    ### END SOLUTION
