"""Peak memory of engine training steps with and without keeping the graph alive.

A ``loss`` kept alive (in a list of losses, say) keeps its graph: every intermediate
tensor of its step with its array, since each node holds its inputs, even once
``backward`` has freed what was saved for it. Keeping ``loss.item()`` keeps one float.
NumPy reports its array buffers to tracemalloc, so tracemalloc sees the arrays; torch's
allocations are not traced and are not measured.
"""

import gc
import tracemalloc
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from autograder.engine.nn import Linear
from autograder.engine.tensor import Tensor
from benchmarks.engine_speed import engine_train_step

MIB = 1024 * 1024


@dataclass(frozen=True)
class MemoryRow:
    """Traced memory of ``steps`` training steps of one model, keeping ``kept`` each step."""

    model: str
    kept: str  # "loss (graph)" or "loss.item()"
    steps: int
    first_step_peak_mib: float  # peak above the starting point during the first step
    last_step_peak_mib: float  # the same during the last step: grows when graphs pile up
    retained_mib: float  # still allocated after the last step, above the starting point

    def as_dict(self) -> dict[str, Any]:
        """The row for the JSON output."""
        return asdict(self)


def _model(sizes: tuple[int, ...], dtype: type, seed: int = 0) -> list[Linear]:
    rng = np.random.default_rng(seed)
    return [
        Linear(fan_in, fan_out, rng=rng, dtype=dtype)
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True)
    ]


def measure_memory(
    sizes: tuple[int, ...], batch: int, dtype: type, keep_graph: bool, steps: int = 10
) -> MemoryRow:
    """Run ``steps`` training steps under tracemalloc, keeping each loss or only its value."""
    rng = np.random.default_rng(1)
    layers = _model(sizes, dtype)
    x = Tensor(rng.standard_normal((batch, sizes[0])).astype(dtype))
    target = Tensor(rng.standard_normal((batch, sizes[-1])).astype(dtype))
    history: list[Any] = []
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        peaks = []
        for _ in range(steps):
            tracemalloc.reset_peak()
            loss = engine_train_step(layers, x, target)
            history.append(loss if keep_graph else loss.item())
            del loss
            peaks.append(tracemalloc.get_traced_memory()[1] - start)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    return MemoryRow(
        model=f"{'-'.join(map(str, sizes))} {np.dtype(dtype).name} batch {batch}",
        kept="loss (graph)" if keep_graph else "loss.item()",
        steps=steps,
        first_step_peak_mib=peaks[0] / MIB,
        last_step_peak_mib=peaks[-1] / MIB,
        retained_mib=retained / MIB,
    )


DEFAULT_MODELS: list[tuple[tuple[int, ...], int, type]] = [
    ((64, 64, 10), 64, np.float64),
    ((784, 256, 10), 128, np.float32),
]


def run_memory(
    models: list[tuple[tuple[int, ...], int, type]] | None = None, steps: int = 10
) -> list[MemoryRow]:
    """Both ways of keeping the loss, for each model: one row each."""
    rows = []
    for sizes, batch, dtype in models if models is not None else DEFAULT_MODELS:
        for keep_graph in (False, True):
            rows.append(measure_memory(sizes, batch, dtype, keep_graph, steps))
    return rows


def format_memory_table(rows: list[MemoryRow]) -> str:
    """The memory table, in MiB as traced by tracemalloc."""
    from autograder.checks.text_table import format_columns

    header = ["model", "kept per step", "steps", "peak step 1", "peak last step", "retained"]
    header.append("retained/step")
    body = [
        [
            row.model,
            row.kept,
            str(row.steps),
            f"{row.first_step_peak_mib:.2f} MiB",
            f"{row.last_step_peak_mib:.2f} MiB",
            f"{row.retained_mib:.2f} MiB",
            f"{row.retained_mib / row.steps:.3f} MiB",
        ]
        for row in rows
    ]
    return "\n".join(format_columns(header, body, right={2, 3, 4, 5, 6}))
