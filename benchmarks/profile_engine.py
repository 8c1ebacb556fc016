"""Where the reference engine's time goes on the 784-256-10 float32 step, beyond the floor.

Two views: cProfile's top functions for the engine step, and the cost, timed alone, of
each piece of work the engine does that the hand-written floor does not.
"""

import cProfile
import io
import pstats
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.engine_speed import _mlp_arrays, engine_mlp_step
from benchmarks.timing import measure_interleaved


def cprofile_engine_step(
    sizes: tuple[int, ...] = (784, 256, 10),
    batch: int = 128,
    dtype: type = np.float32,
    steps: int = 200,
    top: int = 12,
) -> str:
    """cProfile's report (by own time) of ``steps`` engine training steps."""
    x, target, params = _mlp_arrays(sizes, batch, dtype)
    step = engine_mlp_step(x, target, params)
    for _ in range(5):
        step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        step()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime")
    stats.print_stats(top)
    # Keep the table, drop pstats' preamble about ordering and restrictions.
    text = out.getvalue()
    return text[text.find("   ncalls") :].rstrip() if "   ncalls" in text else text


def extra_work(
    sizes: tuple[int, ...] = (784, 256, 10), batch: int = 128, repeat: int = 15
) -> dict[str, Any]:
    """Time alone, per step, work the engine does (or did) on top of the floor's products.

    The first two are what issue 16 removed, kept here to show their size:

    - the gradient of the input batch, which ``MatMul.backward`` computed before it checked
      ``ctx.needs_input_grad``;
    - a C-ordered copy of a transposed weight gradient, which the first accumulation
      (``grad.copy()``) made before ``MatMul.backward`` gave a ``weight.T``'s gradient the
      weight's own layout;
    - Python: the graph objects and calls per operation, measured as the engine step on
      a 1-row, 1-feature problem with the same number of operations.
    """
    x, target, params = _mlp_arrays(sizes, batch, np.float32)
    weight = params[0][0]
    hidden_grad = np.random.default_rng(3).standard_normal((batch, weight.shape[0]))
    hidden_grad = hidden_grad.astype(np.float32)
    weight_grad_view = (x.T @ hidden_grad).T  # what Transpose.backward hands to the leaf
    tiny = engine_mlp_step(*_mlp_arrays((1,) * len(sizes), 1, np.float32))
    pieces: dict[str, Callable[[], Any]] = {
        "input gradient matmul (grad @ W)": lambda: hidden_grad @ weight,
        "C-order copy of the transposed weight grad": lambda: weight_grad_view.copy(),
        "layout-keeping copy (np.copy, order K)": lambda: np.copy(weight_grad_view),
        "Python, graph and tiny-array calls (1x1 step)": tiny,
    }
    timings = measure_interleaved(pieces, repeat=repeat, min_sample_s=0.01)
    # The minimum: each piece alone is short, and load from elsewhere only ever adds to it.
    return {name: timing.min_s for name, timing in timings.items()}


def format_extra_work(extra: dict[str, float], floor_s: float | None = None) -> str:
    """The extra-work table: per-step cost of each piece, and its share of the floor's time."""
    from autograder.checks.text_table import format_columns

    header = ["engine work the floor does not do", "time per step (min)", "of floor (min)"]
    body = []
    for name, seconds in extra.items():
        share = f"{seconds / floor_s:.2f}x" if floor_s else "-"
        if name.startswith("layout-keeping"):
            share = f"({share}, an alternative)"
        body.append([name, f"{seconds * 1e6:.0f} us", share])
    return "\n".join(format_columns(header, body, right={1, 2}))
