"""Speed of the reference engine against hand-written NumPy (the floor), torch and two peers.

Each workload is built five times from the same arrays: with ``autograder.engine`` (the
solutions' engine), as hand-written NumPy forward and backward (the same matrix products
with no graph, so the least any NumPy engine can cost), with torch eager on the CPU, and
with the NumPy autograd libraries HIPS autograd and mygrad (``benchmarks/peers.py``).
Results are reported as ratios to the floor.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from autograder.engine.nn import Linear, mse_loss
from autograder.engine.tensor import Tensor
from benchmarks import peers
from benchmarks.timing import Timing, measure_interleaved

IMPLEMENTATIONS = ("engine", "numpy", "torch", "autograd", "mygrad")
# Column titles, the floor first: HIPS autograd is PyPI's ``autograd``.
TITLES = {
    "numpy": "numpy floor",
    "engine": "engine",
    "torch": "torch cpu",
    "autograd": "hips autograd",
    "mygrad": "mygrad",
}
AGREEMENT_TOLERANCE = 1e-10  # float64: every implementation must end at the same parameters
LEARNING_RATE = 0.01


@dataclass(frozen=True)
class Workload:
    """One benchmark row: a name, its sizes and dtype, and how to build each implementation."""

    name: str
    kind: str  # "mlp step" or "op fwd+bwd"
    dtype: type
    build: Callable[[], dict[str, Callable[[], Any]]]
    notes: str = ""
    sizes: tuple[int, ...] = ()  # an MLP's layer sizes, to rebuild it in float64
    batch: int = 0


@dataclass
class SpeedRow:
    """The timings of one workload and their ratios to the hand-written floor."""

    name: str
    kind: str
    dtype: str
    timings: dict[str, Timing] = field(default_factory=dict)

    def ratio(self, implementation: str) -> float:
        """Median time of ``implementation`` over the median of the hand-written floor."""
        return self.timings[implementation].median_s / self.timings["numpy"].median_s

    def ratio_min(self, implementation: str) -> float:
        """The same ratio between minimums: what load from other processes disturbs least."""
        return self.timings[implementation].min_s / self.timings["numpy"].min_s

    def as_dict(self) -> dict[str, Any]:
        """The row for the JSON output."""
        return {
            "name": self.name,
            "kind": self.kind,
            "dtype": self.dtype,
            "timings": {k: t.as_dict() for k, t in self.timings.items()},
            "ratio_to_numpy": {k: self.ratio(k) for k in self.timings},
            "ratio_to_numpy_of_min": {k: self.ratio_min(k) for k in self.timings},
        }


# ---------------------------------------------------------------------------------------
# MLP training step: Linear layers with ReLU between them, MSE loss, plain SGD.


def _mlp_arrays(
    sizes: tuple[int, ...], batch: int, dtype: type, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Input, target and (weight, bias) per layer, with torch's default initialisation."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    target = rng.standard_normal((batch, sizes[-1])).astype(dtype)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1 / np.sqrt(fan_in)
        weight = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(dtype)
        bias = rng.uniform(-bound, bound, (fan_out,)).astype(dtype)
        params.append((weight, bias))
    return x, target, params


def engine_train_step(
    layers: list[Linear], x: Tensor, target: Tensor, lr: float = LEARNING_RATE
) -> Tensor:
    """One SGD step of a ReLU MLP in the engine; returns the loss tensor (and so its graph)."""
    out = x
    for i, layer in enumerate(layers):
        out = layer(out)
        if i < len(layers) - 1:
            out = out.relu()
    loss = mse_loss(out, target)
    loss.backward()
    for layer in layers:
        for parameter in layer.parameters():
            parameter.data -= lr * parameter.grad
        layer.zero_grad()
    return loss


def engine_mlp_step(
    x: np.ndarray, target: np.ndarray, params: list[tuple[np.ndarray, np.ndarray]]
) -> Callable[[], float]:
    """One training step in the reference engine: forward, backward, SGD, zero_grad."""
    layers = []
    for weight, bias in params:
        layer = Linear(weight.shape[1], weight.shape[0], dtype=weight.dtype)
        layer.weight = Tensor(weight.copy(), requires_grad=True)
        layer.bias = Tensor(bias.copy(), requires_grad=True)
        layers.append(layer)
    inputs, targets = Tensor(x), Tensor(target)

    def step() -> float:
        return engine_train_step(layers, inputs, targets).item()

    step.parameters = lambda: [p.data for layer in layers for p in layer.parameters()]
    return step


def numpy_mlp_step(
    x: np.ndarray, target: np.ndarray, params: list[tuple[np.ndarray, np.ndarray]]
) -> Callable[[], float]:
    """The same step written out by hand in NumPy: the floor, with no graph at all."""
    weights = [(w.copy(), b.copy()) for w, b in params]

    def step() -> float:
        activations = [x]  # the input of each layer
        pre_relu = []
        out = x
        for i, (weight, bias) in enumerate(weights):
            out = out @ weight.T + bias
            if i < len(weights) - 1:
                pre_relu.append(out)
                out = np.maximum(out, 0)
                activations.append(out)
        diff = out - target
        loss = (diff * diff).mean()
        grad = diff * (2 / diff.size)
        for i in reversed(range(len(weights))):
            weight, bias = weights[i]
            grad_weight = grad.T @ activations[i]
            grad_bias = grad.sum(axis=0)
            if i > 0:  # the input itself needs no gradient
                grad = (grad @ weight) * (pre_relu[i - 1] > 0)
            weight -= LEARNING_RATE * grad_weight
            bias -= LEARNING_RATE * grad_bias
        return float(loss)

    step.parameters = lambda: [p for pair in weights for p in pair]
    return step


def torch_mlp_step(
    x: np.ndarray, target: np.ndarray, params: list[tuple[np.ndarray, np.ndarray]]
) -> Callable[[], float]:
    """The same step in torch eager on the CPU, with a hand-written SGD update."""
    weights = [
        (torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
        for w, b in params
    ]
    inputs, targets = torch.from_numpy(x), torch.from_numpy(target)

    def step() -> float:
        out = inputs
        for i, (weight, bias) in enumerate(weights):
            out = F.linear(out, weight, bias)
            if i < len(weights) - 1:
                out = F.relu(out)
        loss = F.mse_loss(out, targets)
        loss.backward()
        with torch.no_grad():
            for pair in weights:
                for parameter in pair:
                    parameter -= LEARNING_RATE * parameter.grad
                    parameter.grad = None
        return loss.item()

    step.parameters = lambda: [p.detach().numpy() for pair in weights for p in pair]
    return step


def mlp_workload(name: str, sizes: tuple[int, ...], batch: int, dtype: type) -> Workload:
    """A training-step workload for an MLP with layer ``sizes`` on a batch of ``batch``."""

    def build() -> dict[str, Callable[[], Any]]:
        x, target, params = _mlp_arrays(sizes, batch, dtype)
        return {
            "engine": engine_mlp_step(x, target, params),
            "numpy": numpy_mlp_step(x, target, params),
            "torch": torch_mlp_step(x, target, params),
            "autograd": peers.hips_mlp_step(x, target, params),
            "mygrad": peers.mygrad_mlp_step(x, target, params),
        }

    return Workload(name, "mlp step", dtype, build, sizes=sizes, batch=batch)


# ---------------------------------------------------------------------------------------
# One operation, forward and backward, on leaves that require grad.

# name -> (engine/torch function, hand-written forward+backward returning the gradients)
_OPS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "matmul": (
        lambda a, b: a @ b,
        lambda a, b, g: (a @ b, g @ b.T, a.T @ g),
    ),
    "add (broadcast)": (
        lambda a, b: a + b,
        lambda a, b, g: (a + b, g.copy(), g.sum(axis=0)),
    ),
    "sum": (
        lambda a: a.sum(),
        lambda a, g: (a.sum(), np.ones_like(a)),
    ),
    "relu": (
        lambda a: a.relu(),
        lambda a, g: (np.maximum(a, 0), g * (a > 0)),
    ),
    "tanh": (
        lambda a: a.tanh(),
        lambda a, g: (lambda out: (out, g * (1 - out * out)))(np.tanh(a)),
    ),
    "sigmoid": (
        lambda a: a.sigmoid(),
        lambda a, g: (lambda out: (out, g * out * (1 - out)))(1 / (1 + np.exp(-a))),
    ),
}


def _op_inputs(op: str, rows: int, cols: int, dtype: type) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((rows, cols)).astype(dtype)
    if op == "matmul":
        return [a, rng.standard_normal((cols, cols)).astype(dtype)]
    if op == "add (broadcast)":
        return [a, rng.standard_normal((cols,)).astype(dtype)]
    return [a]


def op_workload(op: str, rows: int, cols: int, dtype: type) -> Workload:
    """Forward and backward of one operation on ``rows x cols`` inputs (matmul: ``cols x cols``)."""
    engine_fn, numpy_fn = _OPS[op]

    def build() -> dict[str, Callable[[], Any]]:
        arrays = _op_inputs(op, rows, cols, dtype)
        scalar_out = op == "sum"
        out_shape = (rows, cols)
        upstream = np.random.default_rng(2).standard_normal(out_shape).astype(dtype)
        leaves = [Tensor(a.copy(), requires_grad=True) for a in arrays]
        torch_leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
        torch_upstream = torch.from_numpy(upstream)

        def engine() -> None:
            for leaf in leaves:
                leaf.grad = None
            out = engine_fn(*leaves)
            out.backward() if scalar_out else out.backward(upstream)

        def numpy() -> None:
            numpy_fn(*arrays, np.float64(1.0) if scalar_out else upstream)

        def torch_eager() -> None:
            for leaf in torch_leaves:
                leaf.grad = None
            out = engine_fn(*torch_leaves)
            out.backward() if scalar_out else out.backward(torch_upstream)

        peer_upstream = np.float64(1.0) if scalar_out else upstream
        return {
            "engine": engine,
            "numpy": numpy,
            "torch": torch_eager,
            "autograd": peers.hips_op(op, arrays, peer_upstream),
            "mygrad": peers.mygrad_op(op, arrays, peer_upstream),
        }

    shape = f"{rows}x{cols} @ {cols}x{cols}" if op == "matmul" else f"{rows}x{cols}"
    if op == "add (broadcast)":
        shape += f" + {cols}"
    return Workload(f"{op} {shape}", "op fwd+bwd", dtype, build)


def default_workloads(scale: float = 1.0) -> list[Workload]:
    """The course-sized rows of the issue; ``scale`` < 1 shrinks them for smoke tests."""

    def size(n: int) -> int:
        return max(1, round(n * scale))

    mlps = [
        mlp_workload("step: linear 3->1, batch 16 (nb 01)", (3, 1), size(16), np.float64),
        mlp_workload(
            "step: mlp 64-64-10, batch 64", (size(64), size(64), 10), size(64), np.float64
        ),
        mlp_workload(
            "step: mlp 784-256-10, batch 128", (size(784), size(256), 10), size(128), np.float32
        ),
    ]
    ops = []
    for rows, cols, dtype in [(16, 16, np.float64), (128, 256, np.float32)]:
        for op in _OPS:
            ops.append(op_workload(op, size(rows), size(cols), dtype))
    return mlps + ops


def run_speed(
    workloads: list[Workload] | None = None, *, repeat: int = 21, min_sample_s: float = 0.02
) -> list[SpeedRow]:
    """Check that the MLP implementations agree, then time every workload's implementations."""
    workloads = workloads if workloads is not None else default_workloads()
    check_implementations_agree(workloads)
    rows = []
    for workload in workloads:
        fns = workload.build()
        timings = measure_interleaved(fns, repeat=repeat, min_sample_s=min_sample_s)
        label = f"{workload.name}" + (f" ({workload.notes})" if workload.notes else "")
        rows.append(SpeedRow(label, workload.kind, np.dtype(workload.dtype).name, timings))
    return rows


def disagreements(workload: Workload, steps: int = 3, tolerance: float | None = None) -> list[str]:
    """The MLP implementations whose parameters after ``steps`` steps differ from the floor's."""
    fns = workload.build()
    for fn in fns.values():
        for _ in range(steps):
            fn()
    reference = fns["numpy"].parameters()
    if tolerance is None:
        tolerance = 1e-4 if workload.dtype == np.float32 else AGREEMENT_TOLERANCE
    return [
        name
        for name, fn in fns.items()
        if not all(
            np.allclose(a, b, rtol=tolerance, atol=tolerance)
            for a, b in zip(fn.parameters(), reference, strict=True)
        )
    ]


def same_result(workload: Workload, steps: int = 3) -> bool:
    """Do all MLP implementations end with the same parameters after ``steps`` steps?"""
    return not disagreements(workload, steps)


def check_implementations_agree(workloads: list[Workload]) -> None:
    """Raise unless every MLP row's implementations, rebuilt in float64, end at the same
    parameters (to 1e-10): a faster implementation that computes something else is no peer."""
    for workload in workloads:
        if workload.kind != "mlp step":
            continue
        twin = mlp_workload(workload.name, workload.sizes, workload.batch, np.float64)
        wrong = disagreements(twin, tolerance=AGREEMENT_TOLERANCE)
        if wrong:
            raise RuntimeError(
                f"{workload.name}: {', '.join(wrong)} ended with parameters that differ from "
                f"the hand-written NumPy step's by more than {AGREEMENT_TOLERANCE} in float64; "
                "the timings would compare different computations"
            )


def _format_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


def format_speed_table(rows: list[SpeedRow]) -> str:
    """The speed table: median (IQR) per implementation and ratios to the NumPy floor."""
    from autograder.checks.text_table import format_columns

    timed = [name for name in TITLES if name in rows[0].timings] if rows else []
    others = [name for name in timed if name != "numpy"]
    header = ["workload", "dtype", *(TITLES[name] for name in timed)]
    header += [f"{name}/np" for name in others] + ["engine/np (of min)"]
    body = []
    for row in rows:
        cells = [row.name, row.dtype]
        for implementation in timed:
            timing = row.timings[implementation]
            cells.append(
                f"{_format_seconds(timing.median_s)} ±{100 * timing.iqr_s / timing.median_s:.0f}%"
            )
        cells += [f"{row.ratio(name):.2f}x" for name in others]
        cells.append(f"{row.ratio_min('engine'):.2f}x")
        body.append(cells)
    return "\n".join(format_columns(header, body, right=set(range(2, len(header)))))
