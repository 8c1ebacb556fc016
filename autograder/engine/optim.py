"""Plain stochastic gradient descent for the engine, like ``torch.optim.SGD`` (notebook 05)."""

from collections.abc import Iterable

import numpy as np

from autograder.engine.grad_mode import no_grad
from autograder.engine.nn import clear_grads
from autograder.engine.tensor import Tensor


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


# %% chunk: clip-grad-norm
def clip_grad_norm_(parameters: Iterable[Tensor], max_norm: float, norm_type: float = 2.0) -> float:
    """Scale all gradients together so their joint norm is at most ``max_norm``.

    Returns the norm before clipping, as ``torch.nn.utils.clip_grad_norm_`` does, and uses
    its formula (scale = max_norm / (norm + 1e-6), capped at 1) so results match it exactly.
    """
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    ### BEGIN SOLUTION
    if norm_type == np.inf:
        total = max(np.abs(g).max() for g in grads)
    else:
        per_tensor = [np.linalg.norm(g.reshape(-1), norm_type) for g in grads]
        total = np.linalg.norm(np.array(per_tensor), norm_type)
    scale = min(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        g *= scale  # in place: the parameters' .grad arrays themselves
    return float(total)
    ### END SOLUTION
