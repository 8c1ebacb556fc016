"""Functional gradients and hand-written ones, for comparing with autograd (notebook 06)."""

from collections.abc import Callable

import numpy as np

from autograder.engine.tensor import Tensor


# %% chunk: functional-grad
def grad(f: Callable, argnums: int = 0) -> Callable:
    """The function x -> df/dx for a scalar-valued f of arrays, like ``torch.func.grad``.

    The returned function takes and returns NumPy arrays: the graph lives only inside it.
    """

    def gradient(*arrays: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        tensors = [Tensor(np.asarray(a), requires_grad=i == argnums) for i, a in enumerate(arrays)]
        f(*tensors).backward()
        return tensors[argnums].grad
        ### END SOLUTION

    return gradient


# %% chunk: per-sample
def per_sample_grads_loop(
    loss: Callable, w: np.ndarray, xs: np.ndarray, ys: np.ndarray
) -> np.ndarray:
    """Gradient of loss(w, x_i, y_i) for every sample i, one backward per sample;
    xs and ys of different lengths are a ValueError, as in torch.func.vmap."""
    ### BEGIN SOLUTION
    gradient = grad(loss)
    return np.stack([gradient(w, x, y) for x, y in zip(xs, ys, strict=True)])
    ### END SOLUTION


def per_sample_grads_linear(w: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The same for loss = (x . w - y)^2, derived by hand and vectorised: no loop, no graph."""
    ### BEGIN SOLUTION
    residuals = xs @ w - ys  # one per sample
    return 2 * residuals[:, None] * xs
    ### END SOLUTION


# %% chunk: manual-mlp
def manual_mlp_grads(w1, b1, w2, b2, x, y) -> dict[str, np.ndarray]:
    """Gradients of mean((tanh(x W1^T + b1) W2^T + b2 - y)^2), derived by hand in NumPy.

    Returns a dict with the keys "w1", "b1", "w2" and "b2", each an array of that parameter's
    shape. The mean is over all ``y.size`` elements (``n`` in the text above).
    """
    hidden = np.tanh(x @ w1.T + b1)
    prediction = hidden @ w2.T + b2
    ### BEGIN SOLUTION
    d_prediction = 2 * (prediction - y) / y.size  # d loss / d prediction
    d_hidden = d_prediction @ w2
    d_pre = d_hidden * (1 - hidden**2)  # through tanh
    return {
        "w1": d_pre.T @ x,
        "b1": d_pre.sum(axis=0),
        "w2": d_prediction.T @ hidden,
        "b2": d_prediction.sum(axis=0),
    }
    ### END SOLUTION
