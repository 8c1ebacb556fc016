"""A reverse-mode autograd engine on NumPy arrays, in torch's vocabulary.

Notebook 01 builds it: ``Tensor`` wraps an ``np.ndarray``; every operation is a
``Function`` with a ``forward`` (arrays in, array out) and a ``backward`` (gradient of the
output in, gradients of the inputs out); ``Function.apply`` runs forward and records the
graph; ``backward`` walks the graph in topological order and accumulates into leaves.

Later notebooks extend it without touching what came before: a chunk part marked
``from NN`` holds whole definitions, a subclass that keeps the class's name
(``class Context(Context)``) and adds or overrides methods, or a new function, so each
notebook shows the engine as far as it has got.
"""

from typing import Any

import numpy as np

from autograder.engine.grad_mode import is_grad_enabled, is_inference_mode_enabled, no_grad


# %% chunk: unbroadcast
def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum away the broadcast dimensions of ``grad`` so that it has ``shape``.

    An input broadcast along a dimension was used once per position there, so the
    gradient contributions along that dimension add up.
    """
    ### BEGIN SOLUTION
    if grad.shape == shape:  # nothing was broadcast (the usual case): no work at all
        return grad
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
        self.needs_input_grad = tuple([t.requires_grad for t in inputs])
        self._saved: tuple[np.ndarray, ...] = ()

    def save_for_backward(self, *arrays: np.ndarray) -> None:
        self._saved = arrays

    @property
    def saved_tensors(self) -> tuple[np.ndarray, ...]:
        return self._saved

    def __call__(self, grad: np.ndarray) -> tuple:
        """Run the backward rule on the output's gradient: one gradient (or None) per input."""
        grads = self.function.backward(self, grad)
        return grads if isinstance(grads, tuple) else (grads,)

    def name(self) -> str:
        return f"{self.function.__name__}Backward0"

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
        data = cls.forward(ctx, *[t.data for t in inputs], **params)
        requires_grad = is_grad_enabled() and any(ctx.needs_input_grad)
        out = Tensor(data, requires_grad=requires_grad)
        if requires_grad:
            out.grad_fn = ctx
        return out


# %% chunk: function from 02
FREED_GRAPH_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class Context(Context):
    """Notebook 02: a context knows where backward goes next, and can be freed after it."""

    freed = False

    @property
    def saved_tensors(self) -> tuple[np.ndarray, ...]:
        if self.freed:
            raise RuntimeError(FREED_GRAPH_ERROR)
        return super().saved_tensors

    def release(self) -> None:
        """Forget the saved arrays once backward has used them, so their memory can go."""
        ### BEGIN SOLUTION 02
        self._saved = ()
        self.freed = True
        ### END SOLUTION 02

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """Where backward goes from here, as torch's ``grad_fn.next_functions``."""
        ### BEGIN SOLUTION 02
        return tuple((graph_node(tensor), 0) for tensor in self.inputs)
        ### END SOLUTION 02


# %% chunk: function from 03
INFERENCE_SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)


class Context(Context):
    """Notebook 03: a context refuses to save an inference tensor for backward."""

    def save_for_backward(self, *arrays: np.ndarray) -> None:
        if is_grad_enabled() and any(self.needs_input_grad):
            for tensor in self.inputs:
                if tensor.is_inference() and any(a is tensor.data for a in arrays):
                    raise RuntimeError(INFERENCE_SAVE_ERROR)
        super().save_for_backward(*arrays)


class Function(Function):
    """Notebook 03: inside ``inference_mode`` nothing is recorded or saved, even where
    ``enable_grad`` turned grad mode back on: torch skips autograd there altogether."""

    @classmethod
    def apply(cls, *inputs: "Tensor", **params: Any) -> "Tensor":
        if not is_inference_mode_enabled():
            return super().apply(*inputs, **params)
        with no_grad():
            return super().apply(*inputs, **params)


# %% chunk: function from 04
class Context(Context):
    """Notebook 04: what a backward rule returns is checked as torch checks it."""

    def __call__(self, grad: np.ndarray) -> tuple:
        return validate_gradients(self, super().__call__(grad))


# %% chunk: function from 05
class Context(Context):
    """Notebook 05: a context notices when a tensor it saved was changed in place since."""

    saved_versions: tuple = ()

    def save_for_backward(self, *arrays: np.ndarray) -> None:
        super().save_for_backward(*arrays)
        # The version of every input whose array is saved, to compare at backward time.
        saved = {id(a) for a in arrays}
        self.saved_versions = tuple((t, t._version) for t in self.inputs if id(t.data) in saved)

    def check_versions(self) -> None:
        """Raise torch's error if a saved tensor was changed in place since it was saved."""
        ### BEGIN SOLUTION 05
        for tensor, version in self.saved_versions:
            if tensor._version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{tensor.dtype} {list(tensor.shape)}] is at "
                    f"version {tensor._version}; expected version {version} instead."
                )
        ### END SOLUTION 05

    @property
    def saved_tensors(self) -> tuple[np.ndarray, ...]:
        saved = super().saved_tensors
        try:
            self.check_versions()
        except NotImplementedError:
            # check_versions not written yet: backward runs unchecked, so the notebook's
            # other exercises still work (and the version check's own test fails).
            pass
        return saved


class Function(Function):
    """Notebook 05: an output saved for backward (``exp``, ``tanh``) has its version checked
    too, so a change made through ``out.detach()`` is refused as torch refuses it."""

    @classmethod
    def apply(cls, *inputs: "Tensor", **params: Any) -> "Tensor":
        out = super().apply(*inputs, **params)
        ctx = out.grad_fn
        if ctx is not None and any(array is out.data for array in ctx._saved):
            # A detached twin shares the counter without a link back to the graph.
            ctx.saved_versions += ((out.detach(), out._version),)
        return out


# %% chunk: function from 07
class Context(Context):
    """Notebook 07: under ``backward(create_graph=True)`` the rule runs on Tensors."""

    create_graph = False  # set by Tensor.backward for one walk
    output: "Tensor | None" = None

    @property
    def saved_tensors(self) -> tuple[np.ndarray, ...]:
        saved = super().saved_tensors
        if not self.create_graph:
            return saved
        # The saved arrays as the tensors they belong to, so the rule builds a graph.
        owners = {id(t.data): t for t in (*self.inputs, self.output) if t is not None}
        return tuple(owners.get(id(a), a) for a in saved)

    def __call__(self, grad: np.ndarray) -> tuple:
        if self.create_graph and not isinstance(grad, Tensor):
            grad = Tensor(grad)
        return super().__call__(grad)


# %% chunk: tensor
class Tensor:
    """An array plus what autograd needs: ``requires_grad``, ``grad`` and ``grad_fn``."""

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        self.data = np.asarray(data)
        # dtype kind "f": a floating-point dtype (np.issubdtype says the same, but slower).
        if requires_grad and self.data.dtype.kind != "f":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        self.requires_grad = requires_grad
        self.grad: np.ndarray | None = None
        self.grad_fn: Context | None = None

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def keeps_grad(self) -> bool:
        """Whether backward stores this tensor's gradient in ``.grad``: leaves that need one."""
        return self.is_leaf and self.requires_grad

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

    def backward(self, gradient: "Tensor | np.ndarray | None" = None) -> None:
        """Accumulate d self / d leaf into ``leaf.grad`` for every leaf that requires grad."""
        run_backward(self, gradient)

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

    def swapaxes(self, dim0: int, dim1: int) -> "Tensor":
        return Transpose.apply(self, dim0=dim0, dim1=dim1)  # NumPy's name, so rules serve both

    def copy(self) -> "Tensor":
        """The same values as a new tensor, recorded in the graph (torch's ``clone``)."""
        return Reshape.apply(self, shape=self.shape)

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


# %% chunk: tensor from 02
class Tensor(Tensor):
    """Notebook 02: a non-leaf can keep its gradient, and backward frees the graph."""

    retains_grad = False

    def retain_grad(self) -> None:
        """Keep this tensor's gradient after backward although it is not a leaf."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        ### BEGIN SOLUTION 02
        if self.grad_fn is not None:  # a leaf keeps its gradient anyway
            self.retains_grad = True
        ### END SOLUTION 02

    @property
    def keeps_grad(self) -> bool:
        ### BEGIN SOLUTION 02
        return super().keeps_grad or self.retains_grad
        ### END SOLUTION 02

    def backward(
        self, gradient: "Tensor | np.ndarray | None" = None, retain_graph: bool = False
    ) -> None:
        """Accumulate d self / d leaf into ``leaf.grad``; free the graph unless retained."""
        super().backward(gradient)
        if not retain_graph:
            release_graph(self)


# %% chunk: tensor from 03
class Tensor(Tensor):
    """Notebook 03: gradient tracking switched per tensor; inference tensors; detach."""

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        super().__init__(data, requires_grad)
        self._inference = is_inference_mode_enabled()

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Switch gradient tracking of a leaf in place, with torch's errors; returns self."""
        ### BEGIN SOLUTION 03
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not np.issubdtype(self.dtype, np.floating):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self.is_inference() and not is_inference_mode_enabled():
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        self.requires_grad = requires_grad
        return self
        ### END SOLUTION 03

    def is_inference(self) -> bool:
        return self._inference

    def detach(self) -> "Tensor":
        """The same data (shared, not copied), cut from the graph: no grad_fn, no grad."""
        ### BEGIN SOLUTION 03
        detached = Tensor(self.data)
        detached._inference = self._inference  # torch: detach of an inference tensor is one too
        return detached
        ### END SOLUTION 03


# %% chunk: tensor from 05
class Tensor(Tensor):
    """Notebook 05: in-place operations with version counters; numpy() refuses a graph."""

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        super().__init__(data, requires_grad)
        # One counter per array, shared by every tensor over it (detach() too), as torch
        # keeps one per storage: a change made through any of them is seen by all.
        self._version_counter = [0]

    @property
    def _version(self) -> int:
        """How many in-place changes the data has seen, through this tensor or another."""
        return self._version_counter[0]

    @_version.setter
    def _version(self, value: int) -> None:
        self._version_counter[0] = value

    def detach(self) -> "Tensor":
        detached = super().detach()
        detached._version_counter = self._version_counter
        return detached

    def numpy(self) -> np.ndarray:
        """The data itself, not a copy: changes to either show in both (as in torch)."""
        ### BEGIN SOLUTION 05
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self.data
        ### END SOLUTION 05

    def add_(self, other: Any) -> "Tensor":
        """In place: ``self += other``; bumps the version counter."""
        ### BEGIN SOLUTION 05
        self._check_inplace()
        self.data += self._lift(other).data
        self._version += 1
        return self
        ### END SOLUTION 05

    def mul_(self, other: Any) -> "Tensor":
        """In place: ``self *= other``; bumps the version counter."""
        ### BEGIN SOLUTION 05
        self._check_inplace()
        self.data *= self._lift(other).data
        self._version += 1
        return self
        ### END SOLUTION 05

    def _check_inplace(self) -> None:
        if self.requires_grad and self.grad_fn is None and is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        if self.requires_grad and self.grad_fn is not None:
            # torch rewrites the graph around an in-place op on a computed tensor; this
            # engine keeps graphs simple and refuses (write x = x + 1 instead).
            raise RuntimeError(
                "in-place operations on a computed tensor that requires grad are not supported "
                "by this engine: write x = x + 1 instead of x.add_(1)"
            )


# %% chunk: tensor from 07
class Tensor(Tensor):
    """Notebook 07: ``backward(create_graph=True)`` records the backward pass as a graph."""

    def backward(
        self,
        gradient: "Tensor | np.ndarray | None" = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
    ) -> None:
        """Accumulate d self / d leaf into ``leaf.grad``; with ``create_graph`` the gradients
        are Tensors with a graph of their own, so they can be differentiated again."""
        retain = create_graph if retain_graph is None else retain_graph  # torch's default
        # Each walked context learns its output and works on Tensors, for this walk only.
        computed = [t for t in topological_order(self) if t.grad_fn] if create_graph else []
        for tensor in computed:
            tensor.grad_fn.create_graph, tensor.grad_fn.output = True, tensor
        try:
            super().backward(gradient, retain)
        finally:
            for tensor in computed:
                tensor.grad_fn.create_graph, tensor.grad_fn.output = False, None


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
        if ctx.exponent == 0:  # x**0 is constant: torch gives 0, also at x = 0 (not 0 * inf)
            return (np.zeros(a.shape, dtype=a.dtype),)
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
        positive = a > 0  # torch's choice at exactly 0: output 0, gradient 0
        ctx.save_for_backward(positive)
        return np.maximum(a, 0)

    @staticmethod
    def backward(ctx, grad):
        (positive,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        return (grad * positive,)
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
        # A matrix stored column by column: a Linear's ``weight.T``, a view of the weight.
        ctx.b_transposed = b.ndim == 2 and b.flags.f_contiguous and not b.flags.c_contiguous
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ### BEGIN SOLUTION
        # View vectors as matrices (a row for a, a column for b), as matmul does.
        a2 = a.reshape(1, -1) if a.ndim == 1 else a
        b2 = b.reshape(-1, 1) if b.ndim == 1 else b
        grad2 = grad
        if b.ndim == 1:
            grad2 = grad2.reshape(*grad2.shape, 1)
        if a.ndim == 1:
            grad2 = grad2.reshape(*grad2.shape[:-1], 1, grad2.shape[-1])
        # Only the products someone needs, as torch does: an input batch needs no gradient,
        # and its product would cost as much as the forward one.
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = grad2 @ b2.swapaxes(-1, -2)
            # Batch dimensions may have been broadcast: sum them away.
            grad_a = unbroadcast(grad_a, a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            if ctx.b_transposed:
                # The same product computed transposed, (G^T A)^T, so that the gradient has
                # b's layout (torch does this too): the weight's gradient then arrives in the
                # weight's own layout, and copying it needs no transposing copy.
                grad_b = (grad2.swapaxes(-1, -2) @ a2).swapaxes(-1, -2)
            else:
                grad_b = a2.swapaxes(-1, -2) @ grad2
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
            axes = ctx.axis if isinstance(ctx.axis, tuple) else (ctx.axis,)
            axes = [axis % len(ctx.shape) for axis in axes]
            grad = grad.reshape([1 if i in axes else n for i, n in enumerate(ctx.shape)])
        return (broadcast_to(grad, ctx.shape),)
        ### END SOLUTION


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.shape, ctx.axis, ctx.keepdims = a.shape, axis, keepdims
        out = a.mean(axis=axis, keepdims=keepdims)
        ctx.count = a.size // max(out.size, 1)  # elements averaged into each output
        return out

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        # Divide before spreading: one division per output element, not per input element.
        return Sum.backward(ctx, grad / ctx.count)
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
        return a.swapaxes(dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return (grad.swapaxes(*ctx.dims),)


class BroadcastTo(Function):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = a.shape
        return np.full(shape, a)  # a new array of ``shape``, filled with ``a`` broadcast

    @staticmethod
    def backward(ctx, grad):
        return (unbroadcast(grad, ctx.input_shape),)


def broadcast_to(x: "Tensor | np.ndarray", shape: tuple[int, ...]) -> "Tensor | np.ndarray":
    """``x`` repeated to ``shape``: a new array for an array, a recorded op for a Tensor."""
    if isinstance(x, Tensor):
        return BroadcastTo.apply(x, shape=shape)
    return np.full(shape, x)  # as np.broadcast_to(x, shape).copy(), in a fifth of the time


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
                stack.extend([(t, False) for t in tensor.grad_fn.inputs])
    return order


def run_backward(root: Tensor, gradient: "Tensor | np.ndarray | None" = None) -> None:
    """Send d root / d root back through the graph and accumulate into ``.grad``."""
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
    ### BEGIN SOLUTION 01
    grads = {id(root): gradient}
    # Reverse topological order: a tensor's gradient is complete (every use of it has
    # sent its share) before it is passed on to the tensors it was made from.
    for tensor in reversed(topological_order(root)):
        grad = grads.pop(id(tensor), None)
        if grad is None:
            continue
        if tensor.keeps_grad:
            tensor.grad = grad.copy() if tensor.grad is None else tensor.grad + grad
        ctx = tensor.grad_fn
        if ctx is None:
            continue
        for parent, parent_grad in zip(ctx.inputs, ctx(grad), strict=True):
            if parent_grad is None or not parent.requires_grad:
                continue
            if id(parent) in grads:
                grads[id(parent)] = grads[id(parent)] + parent_grad
            else:
                grads[id(parent)] = parent_grad
    ### END SOLUTION 01


# %% chunk: backward from 02
def release_graph(root: Tensor) -> None:
    """Free what every operation behind ``root`` saved: backward through it again fails.

    A context found freed already was freed with everything behind it, so the walk stops there.
    """
    ### BEGIN SOLUTION 02
    stack = [root.grad_fn]
    while stack:
        ctx = stack.pop()
        if ctx is not None and not ctx.freed:
            ctx.release()
            stack.extend([tensor.grad_fn for tensor in ctx.inputs])
    ### END SOLUTION 02


# %% chunk: validate-gradients
def validate_gradients(ctx: Context, grads: tuple) -> tuple:
    """Check what a Function's backward returned, as torch does for custom Functions.

    One gradient (or None) per input; each of the input's shape, or of a shape the input
    broadcasts to, in which case it is summed back to the input's shape (torch's sum_to).
    A gradient returned as a Python number or list is read as an array first (torch would
    insist on a tensor).
    """
    name = f"{ctx.function.__name__}Backward"
    ### BEGIN SOLUTION
    if len(grads) != len(ctx.inputs):
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients "
            f"(expected {len(ctx.inputs)}, got {len(grads)})"
        )
    checked = []
    for index, (tensor, grad) in enumerate(zip(ctx.inputs, grads, strict=True)):
        if grad is not None and not isinstance(grad, Tensor):
            grad = np.asarray(grad)
        if grad is not None and grad.shape != tensor.shape:  # the same shape needs no check
            try:
                broadcasts = np.broadcast_shapes(tensor.shape, grad.shape) == grad.shape
            except ValueError:
                broadcasts = False
            if not broadcasts:
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {index} - got "
                    f"{list(grad.shape)} but expected shape compatible with {list(tensor.shape)}"
                )
            grad = unbroadcast(grad, tensor.shape)
        checked.append(grad)
    return tuple(checked)
    ### END SOLUTION


# %% chunk: graph-nodes
class AccumulateGrad:
    """The graph node of a leaf that requires grad: backward ends there, in ``.grad``."""

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.next_functions: tuple = ()

    def name(self) -> str:
        return "AccumulateGrad"


def graph_node(tensor: Tensor) -> "Context | AccumulateGrad | None":
    """The node backward reaches for ``tensor``: its grad_fn, a leaf's AccumulateGrad, or None."""
    ### BEGIN SOLUTION
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if not tensor.requires_grad:
        return None  # nothing to send a gradient to
    # One node per leaf, made once, so two uses of a leaf lead to the same node (as in torch).
    if getattr(tensor, "_accumulate_grad", None) is None:
        tensor._accumulate_grad = AccumulateGrad(tensor)
    return tensor._accumulate_grad
    ### END SOLUTION
