"""A reverse-mode autograd engine on NumPy arrays, in torch's vocabulary.

Notebook 01 builds it: ``Tensor`` wraps an ``np.ndarray``; every operation is a
``Function`` with a ``forward`` (arrays in, array out) and a ``backward`` (gradient of the
output in, gradients of the inputs out); ``Function.apply`` runs forward and records the
graph; ``backward`` walks the graph in topological order and accumulates into leaves.
"""

from collections.abc import Iterator
from typing import Any

import numpy as np

from autograder.engine.grad_mode import is_grad_enabled


# %% chunk: unbroadcast
def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum away the broadcast dimensions of ``grad`` so that it has ``shape``.

    An input broadcast along a dimension was used once per position there, so the
    gradient contributions along that dimension add up.
    """
    ### BEGIN SOLUTION
    # Dimensions that broadcasting prepended: sum them away entirely.
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    # Dimensions where the input had size 1 and was stretched: sum, keeping the 1.
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
    ### END SOLUTION


# %% chunk: function
class Context:
    """What one operation remembers between its forward and its backward (torch's ``ctx``)."""

    def __init__(self, function: type["Function"], inputs: tuple["Tensor", ...]) -> None:
        self.function = function
        self.inputs = inputs
        self.needs_input_grad = tuple(t.requires_grad for t in inputs)
        self.saved_tensors: tuple[np.ndarray, ...] = ()

    def save_for_backward(self, *arrays: np.ndarray) -> None:
        self.saved_tensors = arrays

    def name(self) -> str:
        return f"{self.function.__name__}Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"


class Function:
    """An operation with a forward rule and a backward rule, used through ``apply``."""

    @staticmethod
    def forward(ctx: Context, *args: np.ndarray, **params: Any) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray | None, ...] | np.ndarray:
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs: "Tensor", **params: Any) -> "Tensor":
        """Run forward on the inputs' arrays; record the graph when a gradient is needed."""
        ctx = Context(cls, inputs)
        data = cls.forward(ctx, *(t.data for t in inputs), **params)
        requires_grad = is_grad_enabled() and any(ctx.needs_input_grad)
        out = Tensor(data, requires_grad=requires_grad)
        if requires_grad:
            out.grad_fn = ctx
        return out


# %% chunk: tensor
class Tensor:
    """An array plus what autograd needs: ``requires_grad``, ``grad`` and ``grad_fn``."""

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        self.data = np.asarray(data)
        if requires_grad and not np.issubdtype(self.data.dtype, np.floating):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self.requires_grad = requires_grad
        self.grad: np.ndarray | None = None
        self.grad_fn: Context | None = None

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def __repr__(self) -> str:
        extra = f", grad_fn={self.grad_fn!r}" if self.grad_fn else ""
        extra += ", requires_grad=True" if self.requires_grad and not self.grad_fn else ""
        return f"Tensor({self.data!r}{extra})"

    def item(self) -> float:
        return self.data.item()

    def numpy(self) -> np.ndarray:
        return self.data

    def detach(self) -> "Tensor":
        return Tensor(self.data)

    def _lift(self, other: Any) -> "Tensor":
        # A Python number takes this tensor's dtype, as in torch (x * 2 stays float32).
        if isinstance(other, Tensor):
            return other
        return Tensor(np.asarray(other, dtype=np.result_type(self.dtype, other)))

    # Operators and methods: each one is a Function defined in the cells below.
    def __add__(self, other: Any) -> "Tensor":
        return Add.apply(self, self._lift(other))

    def __radd__(self, other: Any) -> "Tensor":
        return Add.apply(self._lift(other), self)

    def __sub__(self, other: Any) -> "Tensor":
        return Sub.apply(self, self._lift(other))

    def __rsub__(self, other: Any) -> "Tensor":
        return Sub.apply(self._lift(other), self)

    def __neg__(self) -> "Tensor":
        return Neg.apply(self)

    def __mul__(self, other: Any) -> "Tensor":
        return Mul.apply(self, self._lift(other))

    def __rmul__(self, other: Any) -> "Tensor":
        return Mul.apply(self._lift(other), self)

    def __truediv__(self, other: Any) -> "Tensor":
        return Div.apply(self, self._lift(other))

    def __rtruediv__(self, other: Any) -> "Tensor":
        return Div.apply(self._lift(other), self)

    def __pow__(self, exponent: float) -> "Tensor":
        return Pow.apply(self, exponent=exponent)

    def __matmul__(self, other: "Tensor") -> "Tensor":
        return MatMul.apply(self, self._lift(other))

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> "Tensor":
        return Sum.apply(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> "Tensor":
        return Mean.apply(self, axis=axis, keepdims=keepdims)

    def reshape(self, *shape: int) -> "Tensor":
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return Reshape.apply(self, shape=shape)

    def transpose(self, dim0: int = 0, dim1: int = 1) -> "Tensor":
        return Transpose.apply(self, dim0=dim0, dim1=dim1)

    @property
    def T(self) -> "Tensor":
        return Transpose.apply(self, dim0=-1, dim1=-2) if self.ndim >= 2 else self

    def exp(self) -> "Tensor":
        return Exp.apply(self)

    def log(self) -> "Tensor":
        return Log.apply(self)

    def tanh(self) -> "Tensor":
        return Tanh.apply(self)

    def relu(self) -> "Tensor":
        return ReLU.apply(self)

    def sigmoid(self) -> "Tensor":
        return Sigmoid.apply(self)

    def backward(self, gradient: "Tensor | np.ndarray | None" = None) -> None:
        """Accumulate d self / d leaf into ``leaf.grad`` for every leaf that requires grad."""
        run_backward(self, gradient)


# %% chunk: add-sub-neg
class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        return a + b

    @staticmethod
    def backward(ctx, grad):
        a_shape, b_shape = ctx.shapes
        return unbroadcast(grad, a_shape), unbroadcast(grad, b_shape)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        return a - b

    @staticmethod
    def backward(ctx, grad):
        a_shape, b_shape = ctx.shapes
        return unbroadcast(grad, a_shape), unbroadcast(-grad, b_shape)


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, grad):
        return (-grad,)


# %% chunk: mul-div
class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ### BEGIN SOLUTION
        return unbroadcast(grad * b, a.shape), unbroadcast(grad * a, b.shape)
        ### END SOLUTION


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ### BEGIN SOLUTION
        return unbroadcast(grad / b, a.shape), unbroadcast(-grad * a / (b * b), b.shape)
        ### END SOLUTION


# %% chunk: elementwise
class Pow(Function):
    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        return a**exponent

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        return (grad * ctx.exponent * a ** (ctx.exponent - 1),)
        ### END SOLUTION


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        return (grad * out,)
        ### END SOLUTION


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        return (grad / a,)
        ### END SOLUTION


class Tanh(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        return (grad * (1 - out * out),)
        ### END SOLUTION


class ReLU(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.maximum(a, 0)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        # torch's choice at exactly 0: the gradient is 0.
        return (grad * (a > 0),)
        ### END SOLUTION


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, a):
        out = 1 / (1 + np.exp(-a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        return (grad * out * (1 - out),)
        ### END SOLUTION


# %% chunk: matmul
class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ### BEGIN SOLUTION
        # View vectors as matrices (a row for a, a column for b), as matmul does.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        grad2 = grad
        if b.ndim == 1:
            grad2 = np.expand_dims(grad2, -1)
        if a.ndim == 1:
            grad2 = np.expand_dims(grad2, -2)
        grad_a = grad2 @ np.swapaxes(b2, -1, -2)
        grad_b = np.swapaxes(a2, -1, -2) @ grad2
        # Batch dimensions may have been broadcast: sum them away.
        grad_a = unbroadcast(grad_a, a2.shape).reshape(a.shape)
        grad_b = unbroadcast(grad_b, b2.shape).reshape(b.shape)
        return grad_a, grad_b
        ### END SOLUTION


# %% chunk: reductions
class Sum(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.shape, ctx.axis, ctx.keepdims = a.shape, axis, keepdims
        return a.sum(axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        # Put back the summed axes as size 1, then copy the gradient along them.
        if ctx.axis is not None and not ctx.keepdims:
            grad = np.expand_dims(grad, ctx.axis)
        return (np.broadcast_to(grad, ctx.shape).copy(),)
        ### END SOLUTION


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.shape, ctx.axis, ctx.keepdims = a.shape, axis, keepdims
        return a.mean(axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        (grad_sum,) = Sum.backward(ctx, grad)
        count = int(np.prod(ctx.shape)) // max(grad.size, 1)  # elements averaged per output
        return (grad_sum / count,)
        ### END SOLUTION


# %% chunk: shape-ops
class Reshape(Function):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = a.shape
        return a.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return (grad.reshape(ctx.input_shape),)


class Transpose(Function):
    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = dim0, dim1
        return np.swapaxes(a, dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return (np.swapaxes(grad, *ctx.dims),)


# %% chunk: backward
def topological_order(root: Tensor) -> list[Tensor]:
    """Every tensor of the graph behind ``root``, each after all the tensors it was made from."""
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        tensor, inputs_done = stack.pop()
        if inputs_done:
            order.append(tensor)
        elif id(tensor) not in visited:
            visited.add(id(tensor))
            stack.append((tensor, True))
            if tensor.grad_fn is not None:
                stack.extend((t, False) for t in tensor.grad_fn.inputs)
    return order


def run_backward(root: Tensor, gradient: "Tensor | np.ndarray | None" = None) -> None:
    """Send d root / d root back through the graph and accumulate into the leaves' ``.grad``."""
    if not root.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if gradient is None:
        if root.data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        gradient = np.ones_like(root.data)
    gradient = np.asarray(gradient.data if isinstance(gradient, Tensor) else gradient)
    if gradient.shape != root.shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[0] has a shape of {gradient.shape} and "
            f"output[0] has a shape of {root.shape}."
        )
    ### BEGIN SOLUTION
    grads = {id(root): gradient}
    # Reverse topological order: a tensor's gradient is complete (every use of it has
    # sent its share) before it is passed on to the tensors it was made from.
    for tensor in reversed(topological_order(root)):
        grad = grads.pop(id(tensor), None)
        if grad is None:
            continue
        if tensor.grad_fn is None:
            if tensor.requires_grad:
                tensor.grad = grad.copy() if tensor.grad is None else tensor.grad + grad
            continue
        ctx = tensor.grad_fn
        input_grads = ctx.function.backward(ctx, grad)
        if not isinstance(input_grads, tuple):
            input_grads = (input_grads,)
        for parent, parent_grad in zip(ctx.inputs, input_grads, strict=True):
            if parent_grad is None or not parent.requires_grad:
                continue
            if id(parent) in grads:
                grads[id(parent)] = grads[id(parent)] + parent_grad
            else:
                grads[id(parent)] = parent_grad
    ### END SOLUTION


# %% chunk: module
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
        ### BEGIN SOLUTION
        for parameter in self.parameters():
            if set_to_none:
                parameter.grad = None
            elif parameter.grad is not None:
                parameter.grad = np.zeros_like(parameter.grad)
        ### END SOLUTION

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
