"""The capstone's model and training step, written for the engine (notebook 08)."""

from collections.abc import Iterator

import numpy as np

from autograder.engine.nn import Linear, Module
from autograder.engine.optim import SGD, clip_grad_norm_
from autograder.engine.tensor import Tensor


# %% chunk: mlp
class MLP(Module):
    """Linear layers with tanh between them; the last layer gives one logit per example."""

    def __init__(self, sizes: list[int], rng: np.random.Generator) -> None:
        self.layers = [Linear(a, b, rng=rng) for a, b in zip(sizes[:-1], sizes[1:], strict=False)]

    def named_parameters(self) -> Iterator[tuple[str, Tensor]]:
        # Names as torch's nn.Sequential gives them: "0.weight", "0.bias", "2.weight", ...
        for index, layer in enumerate(self.layers):
            for name, parameter in layer.named_parameters():
                yield f"{2 * index}.{name}", parameter

    def forward(self, x: Tensor) -> Tensor:
        ### BEGIN SOLUTION
        for layer in self.layers[:-1]:
            x = layer(x).tanh()
        return self.layers[-1](x)
        ### END SOLUTION


def binary_cross_entropy(logits, targets):
    """Mean of -[y log p + (1 - y) log(1 - p)] with p = sigmoid(logits); engine or torch."""
    p = logits.sigmoid()
    return -(targets * p.log() + (1.0 - targets) * (1.0 - p).log()).mean()


# %% chunk: train-step
def train_step(model: MLP, optimizer: SGD, x: Tensor, y: Tensor, max_norm: float) -> float:
    """One training step with gradient clipping; returns the loss as a float."""
    ### BEGIN SOLUTION
    optimizer.zero_grad(set_to_none=True)
    loss = binary_cross_entropy(model(x), y)
    loss.backward()
    clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
    ### END SOLUTION
