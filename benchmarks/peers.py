"""The same workloads in two other NumPy autograd libraries: HIPS autograd and mygrad.

HIPS autograd (``autograd``) traces a Python function and differentiates it functionally
(``value_and_grad``); mygrad records a graph on its own ``Tensor`` as the engine does. Both
compute on NumPy arrays, so they are the engine's nearest peers; the benchmark times them
beside the engine, the hand-written floor and torch.
"""

from collections.abc import Callable
from typing import Any

import autograd
import autograd.numpy as anp
import mygrad
import numpy as np

LEARNING_RATE = 0.01  # the same as engine_speed's (kept here to avoid a circular import)

Params = list[tuple[np.ndarray, np.ndarray]]


def _mlp_loss(xp: Any, weights: Any, x: Any, target: Any) -> Any:
    """Mean squared error of a ReLU MLP, written once for any NumPy-like namespace ``xp``."""
    out = x
    for i, (weight, bias) in enumerate(weights):
        out = xp.matmul(out, weight.T) + bias
        if i < len(weights) - 1:
            out = xp.maximum(out, 0)
    diff = out - target
    return xp.mean(diff * diff)


def hips_mlp_step(x: np.ndarray, target: np.ndarray, params: Params) -> Callable[[], float]:
    """One SGD step with HIPS autograd: ``value_and_grad`` of the loss, then the update."""
    weights = [(w.copy(), b.copy()) for w, b in params]
    loss_and_grads = autograd.value_and_grad(lambda ws: _mlp_loss(anp, ws, x, target))

    def step() -> float:
        loss, grads = loss_and_grads(weights)
        for (weight, bias), (grad_weight, grad_bias) in zip(weights, grads, strict=True):
            weight -= LEARNING_RATE * grad_weight
            bias -= LEARNING_RATE * grad_bias
        return float(loss)

    step.parameters = lambda: [p for pair in weights for p in pair]
    return step


def mygrad_mlp_step(x: np.ndarray, target: np.ndarray, params: Params) -> Callable[[], float]:
    """One SGD step with mygrad: forward on its Tensors, ``backward``, update, clear grads."""
    weights = [(mygrad.tensor(w.copy()), mygrad.tensor(b.copy())) for w, b in params]

    def step() -> float:
        loss = _mlp_loss(mygrad, weights, x, target)
        loss.backward()
        for pair in weights:
            for parameter in pair:
                parameter.data -= LEARNING_RATE * parameter.grad
                parameter.null_grad()
        return loss.item()

    step.parameters = lambda: [p.data for pair in weights for p in pair]
    return step


# One operation, forward and backward, written for any NumPy-like namespace.
OPS: dict[str, Callable[..., Any]] = {
    "matmul": lambda xp, a, b: xp.matmul(a, b),
    "add (broadcast)": lambda xp, a, b: a + b,
    "sum": lambda xp, a: xp.sum(a),
    "relu": lambda xp, a: xp.maximum(a, 0),
    "tanh": lambda xp, a: xp.tanh(a),
    "sigmoid": lambda xp, a: 1 / (1 + xp.exp(-a)),
}


def hips_op(op: str, arrays: list[np.ndarray], upstream: Any) -> Callable[[], Any]:
    """Forward and backward of ``op`` with HIPS autograd: one VJP per input."""
    fn = OPS[op]
    argnums = tuple(range(len(arrays)))
    vjp_maker = autograd.make_vjp(lambda *args: fn(anp, *args), argnum=argnums)

    def run() -> Any:
        vjp, _ = vjp_maker(*arrays)
        return vjp(upstream)

    return run


def mygrad_op(op: str, arrays: list[np.ndarray], upstream: Any) -> Callable[[], Any]:
    """Forward and backward of ``op`` with mygrad, on leaves that keep their gradients."""
    fn = OPS[op]
    leaves = [mygrad.tensor(a.copy()) for a in arrays]

    def run() -> None:
        out = fn(mygrad, *leaves)
        out.backward(upstream)
        for leaf in leaves:
            leaf.null_grad()

    return run
