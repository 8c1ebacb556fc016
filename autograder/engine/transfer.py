"""Gradient flow and transfer learning: which parameters learn, and a frozen encoder (07)."""

from typing import Any

from autograder.engine.grad_mode import no_grad
from autograder.engine.nn import Module, mse_loss
from autograder.engine.optim import SGD


# %% chunk: gradient-flow
def parameters_without_grad(model: Any) -> list[str]:
    """Names of the parameters whose ``.grad`` is still None after backward.

    Works for an engine Module and a torch ``nn.Module`` alike: both have named_parameters.
    A name here means no gradient reached it: a disconnected branch or a frozen layer.
    """
    ### BEGIN SOLUTION
    return [name for name, parameter in model.named_parameters() if parameter.grad is None]
    ### END SOLUTION


# %% chunk: transfer-step
def transfer_step(encoder: Module, head: Module, x: Any, y: Any, lr: float) -> float:
    """One SGD step on the head only: the encoder runs under no_grad, so it records nothing.

    Returns the loss. The encoder's parameters get no gradient and do not change.
    """
    ### BEGIN SOLUTION
    with no_grad():
        features = encoder(x)
    loss = mse_loss(head(features), y)
    head.zero_grad()
    loss.backward()
    SGD(head.parameters(), lr).step()
    return loss.item()
    ### END SOLUTION
