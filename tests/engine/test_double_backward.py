"""Does the engine's backward with create_graph=True give torch's second derivatives?"""

import numpy as np
import pytest
import torch

from autograder import check_array
from autograder.engine.tensor import Tensor

# torch warns that backward(create_graph=True) makes a reference cycle; the tests reset .grad.
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")

RNG = np.random.default_rng(7)

FUNCTIONS = {
    "cube and exp": lambda x: (x**3 + x.exp()).sum(),
    "tanh of a product": lambda x: (x * x.sigmoid()).tanh().sum(),
    "log of a square": lambda x: ((x * x + 1.0).log() / 2.0).mean(),
    "matmul and sum over an axis": lambda x: (
        (x.reshape(2, 3) @ x.reshape(3, 2)).sum(axis=0) ** 2
    ).sum(),
    "broadcast and transpose": lambda x: (
        ((x.reshape(2, 3).T.relu() * 2.0).sum(axis=1, keepdims=True) * x.reshape(3, 2)).sum() ** 2
    ),
}


def second_derivatives(make, fn, values, v):
    """Gradient, then the Hessian-vector product H v from differentiating <grad, v> again."""
    x = make(values, requires_grad=True)
    fn(x).backward(create_graph=True)
    gradient = x.grad
    x.grad = None
    (gradient * make(v)).sum().backward()
    first = gradient.detach().numpy() if hasattr(gradient, "detach") else gradient
    return first, x.grad


@pytest.mark.parametrize("name", FUNCTIONS)
def test_hessian_vector_products_match_torch(name):
    values, v = RNG.standard_normal(6), RNG.standard_normal(6)
    engine_first, engine_hv = second_derivatives(Tensor, FUNCTIONS[name], values, v)
    torch_first, torch_hv = second_derivatives(torch.tensor, FUNCTIONS[name], values, v)
    engine_first = engine_first.data if isinstance(engine_first, Tensor) else engine_first
    check_array(f"{name}: first derivative", engine_first, torch_first, quiet=True)
    engine_hv = engine_hv.data if isinstance(engine_hv, Tensor) else engine_hv
    check_array(f"{name}: Hessian-vector product", engine_hv, torch_hv.numpy(), quiet=True)


def test_a_gradient_computed_with_create_graph_has_a_graph():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x**2).sum().backward(create_graph=True)
    assert isinstance(x.grad, Tensor) and x.grad.grad_fn is not None
    assert x.grad.requires_grad


def test_without_create_graph_gradients_stay_arrays():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x**2).sum().backward()
    assert isinstance(x.grad, np.ndarray)
