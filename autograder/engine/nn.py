"""Layers, a loss and parameter bookkeeping built on the engine, as torch.nn is on autograd.

Notebook 01 writes them; notebooks 05-08 train with them. They only combine ``Tensor``
operations: nothing here knows about the graph.
"""

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from autograder.engine.tensor import Tensor


# %% chunk: module
def clear_grads(parameters: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Forget accumulated gradients: set them to None (torch's default) or fill with zeros."""
    ### BEGIN SOLUTION
    for parameter in parameters:
        if set_to_none:
            parameter.grad = None
        elif parameter.grad is not None:
            parameter.grad = np.zeros_like(parameter.grad)
    ### END SOLUTION


class Module:
    """A container of parameters, like ``torch.nn.Module`` (without submodule magic)."""

    def named_parameters(self) -> Iterator[tuple[str, Tensor]]:
        ### BEGIN SOLUTION
        for name, value in vars(self).items():
            if isinstance(value, Tensor) and value.requires_grad:
                yield name, value
        ### END SOLUTION

    def parameters(self) -> Iterator[Tensor]:
        for _, parameter in self.named_parameters():
            yield parameter

    def zero_grad(self, set_to_none: bool = True) -> None:
        clear_grads(self.parameters(), set_to_none)

    def __call__(self, *args: Any) -> Tensor:
        return self.forward(*args)


class Linear(Module):
    """``y = x @ weight.T + bias`` with torch's shapes and default initialisation."""

    def __init__(self, in_features: int, out_features: int, rng=None, dtype=np.float64) -> None:
        rng = np.random.default_rng() if rng is None else rng
        bound = 1 / np.sqrt(in_features)  # torch's default: U(-1/sqrt(in), 1/sqrt(in))
        weight = rng.uniform(-bound, bound, (out_features, in_features))
        bias = rng.uniform(-bound, bound, (out_features,))
        self.weight = Tensor(weight.astype(dtype), requires_grad=True)
        self.bias = Tensor(bias.astype(dtype), requires_grad=True)

    def forward(self, x: Tensor) -> Tensor:
        ### BEGIN SOLUTION
        return x @ self.weight.T + self.bias
        ### END SOLUTION


def mse_loss(prediction: Tensor, target: Tensor) -> Tensor:
    """Mean of squared errors over every element, as ``torch.nn.functional.mse_loss``."""
    ### BEGIN SOLUTION
    return ((prediction - target) ** 2).mean()
    ### END SOLUTION
