"""Plain stochastic gradient descent for the engine, like ``torch.optim.SGD`` (notebook 05)."""

from collections.abc import Iterable

from autograder.engine.grad_mode import no_grad
from autograder.engine.tensor import Tensor, clear_grads


# %% chunk: sgd
class SGD:
    """Gradient descent on a list of parameters: ``p -= lr * p.grad``, no momentum."""

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        self.params = list(params)
        self.lr = lr

    def zero_grad(self, set_to_none: bool = True) -> None:
        clear_grads(self.params, set_to_none)

    def step(self) -> None:
        """Update every parameter that has a gradient, in place and outside the graph."""
        ### BEGIN SOLUTION
        with no_grad():
            for parameter in self.params:
                if parameter.grad is not None:
                    parameter.add_(-self.lr * parameter.grad)
        ### END SOLUTION
