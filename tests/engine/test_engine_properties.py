"""Does the reference engine agree with torch on random shapes, broadcasts and dtypes?"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder import check_parity
from autograder.engine.tensor import Tensor

DTYPES = st.sampled_from([np.float64, np.float32])
settings.register_profile("engine", max_examples=40, deadline=None)
settings.load_profile("engine")


def values(shape, dtype, low=-2.0, high=2.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def away_from_zero(array):
    """Divisors and log arguments: keep them off zero so float32 comparisons stay meaningful."""
    return np.where(np.abs(array) < 0.5, np.sign(array) + (array == 0), array)


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


@pytest.mark.parametrize("op", BINARY)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
    dtype=DTYPES,
    seed=st.integers(0, 2**16),
)
def test_binary_ops_broadcast_like_torch(op, shapes, dtype, seed):
    shape_a, shape_b = shapes.input_shapes
    a = values(shape_a, dtype, seed=seed)
    b = away_from_zero(values(shape_b, dtype, seed=seed + 1))
    check_parity(BINARY[op], {"a": a, "b": b}, tensor_type=Tensor, quiet=True)


UNARY = {
    "exp": lambda a: a.exp(),
    "log": lambda a: (a * a + 0.5).log(),
    "tanh": lambda a: a.tanh(),
    "relu": lambda a: a.relu(),
    "sigmoid": lambda a: a.sigmoid(),
    "pow": lambda a: (a * a + 0.5) ** 1.5,
    "neg-scalar": lambda a: 2.0 - (-a) / 4.0,
}


@pytest.mark.parametrize("op", UNARY)
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
    dtype=DTYPES,
    seed=st.integers(0, 2**16),
)
def test_elementwise_ops_like_torch(op, shape, dtype, seed):
    check_parity(UNARY[op], {"a": values(shape, dtype, seed=seed)}, tensor_type=Tensor, quiet=True)


@given(
    batch=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3),
    n=st.integers(1, 4),
    k=st.integers(1, 4),
    m=st.integers(1, 4),
    dtype=DTYPES,
    seed=st.integers(0, 2**16),
)
def test_matmul_with_batches_like_torch(batch, n, k, m, dtype, seed):
    batch_a, batch_b = batch.input_shapes
    a = values((*batch_a, n, k), dtype, seed=seed)
    b = values((*batch_b, k, m), dtype, seed=seed + 1)
    check_parity(lambda a, b: a @ b, {"a": a, "b": b}, tensor_type=Tensor, quiet=True)


@given(k=st.integers(1, 5), m=st.integers(1, 4), left=st.booleans(), seed=st.integers(0, 2**16))
def test_matmul_with_vectors_like_torch(k, m, left, seed):
    vector, matrix = values((k,), np.float64, seed=seed), values((k, m), np.float64, seed=seed + 1)
    if left:
        check_parity(lambda v, w: v @ w, {"v": vector, "w": matrix}, tensor_type=Tensor, quiet=True)
    else:
        check_parity(
            lambda v, w: w.T @ v, {"v": vector, "w": matrix}, tensor_type=Tensor, quiet=True
        )


@st.composite
def reductions(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4))
    axis = draw(
        st.none()
        | hnp.valid_tuple_axes(len(shape), min_size=1)
        | st.integers(-len(shape), len(shape) - 1)
    )
    return shape, axis, draw(st.booleans()), draw(st.sampled_from(["sum", "mean"]))


@given(case=reductions(), dtype=DTYPES, seed=st.integers(0, 2**16))
def test_reductions_like_torch(case, dtype, seed):
    shape, axis, keepdims, name = case
    kwargs = {} if axis is None else {"axis": axis, "keepdims": keepdims}
    check_parity(
        lambda a: getattr(a, name)(**kwargs),
        {"a": values(shape, dtype, seed=seed)},
        tensor_type=Tensor,
        quiet=True,
    )


@given(shape=hnp.array_shapes(min_dims=2, max_dims=3, max_side=4), seed=st.integers(0, 2**16))
def test_shape_ops_like_torch(shape, seed):
    a = values(shape, np.float64, seed=seed)
    check_parity(
        lambda a: a.reshape(-1).reshape(shape).transpose(0, 1) * 3.0,
        {"a": a},
        tensor_type=Tensor,
        quiet=True,
    )


def test_reused_tensor_through_paths_of_different_lengths():
    def graph(a, b):
        h = a * b
        k = (h * h).sum(axis=0) + h.mean()
        return (k * h).tanh().sum() + h.sum()

    check_parity(
        graph,
        {"a": values((3, 4), np.float64), "b": values((4,), np.float64, seed=1)},
        tensor_type=Tensor,
        quiet=True,
    )
