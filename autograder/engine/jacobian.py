"""Vector-Jacobian products and full Jacobians built from them (notebook 07)."""

from collections.abc import Callable

import numpy as np

from autograder.engine.tensor import Tensor


# %% chunk: vjp
def vjp(f: Callable, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(f(x), v^T J): one backward pass seeded with ``v``, like ``torch.autograd.functional.vjp``.

    ``backward(gradient=v)`` never builds J; it pushes ``v`` through the graph, which costs
    about one forward pass whatever the size of J.
    """
    ### BEGIN SOLUTION
    x_tensor = Tensor(np.asarray(x), requires_grad=True)
    y = f(x_tensor)
    y.backward(gradient=np.asarray(v, dtype=y.dtype))
    return y.data, x_tensor.grad
    ### END SOLUTION


def jacobian(f: Callable, x: np.ndarray) -> np.ndarray:
    """The full Jacobian, shape ``f(x).shape + x.shape``, as one VJP per output element."""
    ### BEGIN SOLUTION
    x = np.asarray(x)
    y_shape = f(Tensor(x)).shape
    rows = []
    for index in range(int(np.prod(y_shape))):
        basis = np.zeros(int(np.prod(y_shape)), dtype=x.dtype)
        basis[index] = 1.0  # picks row `index` of J: e_i^T J
        _, row = vjp(f, x, basis.reshape(y_shape))
        rows.append(row)
    return np.stack(rows).reshape(*y_shape, *x.shape)
    ### END SOLUTION
