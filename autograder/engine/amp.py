"""Parameters that register themselves, float16 arithmetic on float32 master weights, and
torch's loss scaler, for the engine (notebook 09).

torch's ``nn.Module`` finds its parameters because ``__setattr__`` files each ``Parameter``
(and each submodule) in a dictionary of its own as it is assigned. Mixed precision runs the
heavy products in float16 while the optimizer keeps float32 weights; the loss scaler
multiplies the loss before backward so that small gradients survive float16, then divides
them back and skips any step whose gradients overflowed, as ``torch.amp.GradScaler`` does.
"""

from collections.abc import Iterator
from typing import Any

import numpy as np

from autograder.engine.nn import Module, mse_loss
from autograder.engine.optim import SGD
from autograder.engine.tensor import Function, Tensor


# %% chunk: parameter
class Parameter(Tensor):
    """A tensor that a ``Module`` registers when it is assigned as an attribute."""

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        super().__init__(data.data if isinstance(data, Tensor) else data, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module(Module):
    """Notebook 09: parameters and submodules are registered as they are assigned."""

    def __init__(self) -> None:
        # Written past __setattr__: these two dictionaries are the registry itself.
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})

    def __getattr__(self, name: str) -> Any:
        """Called only when ordinary lookup fails: registered names live in the registry."""
        for registry in ("_parameters", "_modules"):
            entries = self.__dict__.get(registry, {})
            if name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        """File a Parameter or a Module under ``name`` in its registry; others as attributes."""
        ### BEGIN SOLUTION
        parameters, modules = self._parameters, self._modules
        # A name lives in one place only; in its own registry it keeps its position.
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            modules.pop(name, None)
            parameters[name] = value
        elif name in parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(Parameter or None expected)"
                )
            parameters[name] = None  # still registered, as None: skipped when listing
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            modules[name] = value
        elif name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(Module or None expected)"
                )
            modules[name] = None
        else:
            object.__setattr__(self, name, value)
        ### END SOLUTION

    def named_modules(
        self, memo: set[int] | None = None, prefix: str = ""
    ) -> Iterator[tuple[str, "Module"]]:
        """This module, then its submodules depth first in assignment order, each once."""
        ### BEGIN SOLUTION
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name)
        ### END SOLUTION

    def named_parameters(self) -> Iterator[tuple[str, Parameter]]:
        """Each module's own parameters in assignment order, module by module, each once."""
        seen = set()
        for prefix, module in self.named_modules():
            for name, parameter in module._parameters.items():
                if parameter is not None and id(parameter) not in seen:
                    seen.add(id(parameter))
                    yield (f"{prefix}.{name}" if prefix else name), parameter


class Linear(Module):
    """torch's ``nn.Linear``: ``x @ weight.T + bias``, both Parameters; ``bias=False``: none."""

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, rng=None, dtype=np.float64
    ) -> None:
        super().__init__()
        rng = np.random.default_rng() if rng is None else rng
        bound = 1 / np.sqrt(in_features)  # torch's default: U(-1/sqrt(in), 1/sqrt(in))
        weight = rng.uniform(-bound, bound, (out_features, in_features))
        self.weight = Parameter(weight.astype(dtype))
        self.bias = None
        if bias:
            self.bias = Parameter(rng.uniform(-bound, bound, (out_features,)).astype(dtype))

    def forward(self, x: Tensor) -> Tensor:
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias


class TinyNet(Module):
    """Linear, ReLU, Linear, without biases: the model of this notebook's float16 runs."""

    def __init__(self, sizes: tuple[int, int, int], rng: np.random.Generator) -> None:
        super().__init__()
        self.first = Linear(sizes[0], sizes[1], bias=False, rng=rng, dtype=np.float32)
        self.second = Linear(sizes[1], sizes[2], bias=False, rng=rng, dtype=np.float32)

    def forward(self, x: Tensor) -> Tensor:
        return self.second(self.first(x).relu())


# %% chunk: cast
class Cast(Function):
    """``x.to(dtype)``: the forward converts the values, the backward the gradient."""

    @staticmethod
    def forward(ctx, a, dtype):
        ### BEGIN SOLUTION
        ctx.input_dtype = a.dtype
        return a.astype(dtype)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        # The input's gradient in the input's dtype: float32 weights get float32 gradients.
        return (grad.astype(ctx.input_dtype),)
        ### END SOLUTION


def cast(x: Tensor, dtype: Any) -> Tensor:
    """``x`` as ``dtype``, recorded in the graph; ``x`` itself when it has that dtype already."""
    dtype = np.dtype(dtype)
    return x if x.dtype == dtype else Cast.apply(x, dtype=dtype)


# %% chunk: half-forward
def half_forward(x: Tensor, weight1: Tensor, weight2: Tensor) -> Tensor:
    """TinyNet's forward, ``relu(x @ weight1.T) @ weight2.T``, computed in float16."""
    ### BEGIN SOLUTION
    hidden = (cast(x, np.float16) @ cast(weight1, np.float16).T).relu()
    return hidden @ cast(weight2, np.float16).T
    ### END SOLUTION


def mixed_loss(model: TinyNet, x: Tensor, y: Tensor) -> Tensor:
    """The MSE of the float16 forward, computed in float32 (a loss needs float32's range)."""
    out = half_forward(x, model.first.weight, model.second.weight)
    return mse_loss(cast(out, np.float32), y)


# %% chunk: loss-scaler
class LossScaler:
    """``torch.amp.GradScaler``'s algorithm for one optimizer, on the engine."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
    ) -> None:
        self._scale = np.float32(init_scale)  # a float32 number, as torch's scale tensor
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self._growth_tracker = 0  # clean steps in a row since the scale last changed
        self._found_inf = False  # what the last unscale_ found
        self._stage = "ready"  # then "unscaled" (after unscale_), "stepped" (after step)

    def get_scale(self) -> float:
        return float(self._scale)

    def scale(self, loss: Tensor) -> Tensor:
        """The loss times the scale, recorded in the graph: backward sends scaled gradients."""
        ### BEGIN SOLUTION
        return loss * self._scale
        ### END SOLUTION

    def unscale_(self, optimizer: SGD) -> None:
        """Multiply every gradient by 1 / scale in place; note whether any was inf or NaN."""
        ### BEGIN SOLUTION
        if self._stage == "unscaled":
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if self._stage == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        # torch takes the reciprocal in float64, then rounds it to float32.
        inv_scale = np.float32(1.0 / np.float64(self._scale))
        self._found_inf = False
        for parameter in optimizer.params:
            if parameter.grad is not None:
                if not np.isfinite(parameter.grad).all():
                    self._found_inf = True
                parameter.grad *= inv_scale
        self._stage = "unscaled"
        ### END SOLUTION

    def step(self, optimizer: SGD) -> None:
        """Unscale (unless done already), then step, unless a gradient was inf or NaN."""
        ### BEGIN SOLUTION
        if self._stage == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if self._stage == "ready":
            self.unscale_(optimizer)
        if not self._found_inf:
            optimizer.step()
        self._stage = "stepped"
        ### END SOLUTION

    def update(self) -> None:
        """Back off after an overflow; grow after growth_interval clean steps in a row."""
        ### BEGIN SOLUTION
        if self._stage == "ready":
            raise AssertionError("No inf checks were recorded prior to update.")
        if self._found_inf:
            self._scale = np.float32(np.float64(self._scale) * self.backoff_factor)
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self.growth_interval:
                with np.errstate(over="ignore"):  # float32 overflow: inf, tested next
                    grown = np.float32(np.float64(self._scale) * self.growth_factor)
                if np.isfinite(grown):  # a scale that would overflow float32 stays
                    self._scale = grown
                self._growth_tracker = 0
        self._stage = "ready"
        ### END SOLUTION


# %% chunk: amp-step
def amp_train_step(
    model: TinyNet, optimizer: SGD, scaler: LossScaler, x: Tensor, y: Tensor
) -> float:
    """One mixed-precision training step with the loss scaler; returns the unscaled loss."""
    ### BEGIN SOLUTION
    optimizer.zero_grad(set_to_none=True)
    loss = mixed_loss(model, x, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
    ### END SOLUTION
