"""``make bench``: run the benchmarks, print their tables and write build/bench/*.json.

Sections: ``speed`` (reference engine against hand-written NumPy and torch eager on the
CPU), ``profile`` (where the engine's extra time goes on the largest MLP row), ``memory``
(a training step with and without keeping the graph) and ``grading`` (nbgrader autograde
of the demo cohort and the nbval suite). ``autograde-parallel`` (sequential nbgrader against
parallel autograde on a cohort of 40 submissions) runs only when named. Nothing here asserts
anything about time. ``notebooks`` (each solution notebook's run time under nbclient; with
``--baseline``, against an earlier run) also runs only when named.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from autograder.grading.course.repo_paths import REPO_ROOT
from benchmarks.timing import load_average, machine_info, set_threads, use_cpu_time

SECTIONS = ("speed", "profile", "memory", "grading")
# Run only when named: it grades the cohort several times over (minutes per mode).
OPT_IN_SECTIONS = ("autograde-parallel", "notebooks")
DEFAULT_OUT = REPO_ROOT / "build" / "bench"

# Targets from issue 16: the engine's median over the NumPy floor's, per MLP row (by the
# row's name); every MLP row must also beat torch eager, HIPS autograd and mygrad.
RATIO_TARGETS = {"784-256-10": 1.3, "linear 3->1": 4.0}
PEERS = ("torch", "autograd", "mygrad")


def _write_json(out: Path, name: str, payload: Any) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"wrote {path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}")
    return path


def _targets(rows: list[Any]) -> list[str]:
    """One line per MLP row: does the engine meet issue 16's targets?"""
    lines = []
    for row in (row for row in rows if row.kind == "mlp step"):
        ratio = row.ratio("engine")
        parts = [f"engine {ratio:.2f}x the floor ({row.ratio_min('engine'):.2f}x of minimums)"]
        target = next((t for key, t in RATIO_TARGETS.items() if key in row.name), None)
        if target is not None:
            parts.append(f"{'meets' if ratio <= target else 'MISSES'} <= {target}x")
        for peer in (peer for peer in PEERS if peer in row.timings):
            faster = "faster" if ratio < row.ratio(peer) else "NOT faster"
            parts.append(f"{faster} than {peer} ({row.ratio(peer):.2f}x)")
        noisy = any(t.iqr_s > 0.5 * t.median_s for t in row.timings.values())
        if noisy:
            parts.append("[noisy: an IQR is over 50% of its median; rerun on a quiet machine]")
        lines.append(f"  {row.name}: " + "; ".join(parts))
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections, print a table for each, write JSON; exit 0 unless one fails."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument(
        "sections", nargs="*", choices=[[], *SECTIONS, *OPT_IN_SECTIONS], default=[]
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the JSON")
    parser.add_argument("--repeat", type=int, default=25, help="timed samples per workload")
    parser.add_argument("--quick", action="store_true", help="few samples: a smoke run")
    parser.add_argument(
        "--cohort-sample",
        type=int,
        default=0,
        help="autograde only the first N students of the demo cohort (default 0: all)",
    )
    parser.add_argument(
        "--submissions",
        type=int,
        default=40,
        help="autograde-parallel: submissions of 00-recipe in the cohort (default 40)",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="BLAS and torch threads (default: all cores)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="notebooks: an earlier run's notebooks.json, shown as a 'before' column",
    )
    args = parser.parse_args(argv)
    sections = args.sections or list(SECTIONS)
    repeat = 5 if args.quick else args.repeat
    min_sample_s = 0.005 if args.quick else 0.02

    started = time.perf_counter()
    if args.threads:
        set_threads(args.threads)
    # On one thread the process's CPU time is the work itself; wall time would also count the
    # time other processes held the core (on a shared machine, most of the noise).
    use_cpu_time(args.threads == 1)
    info = machine_info()
    info["clock"] = "process CPU time" if args.threads == 1 else "wall time"
    print("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    _write_json(args.out, "machine", info)

    floor_784 = None
    if "speed" in sections:
        from benchmarks.engine_speed import format_speed_table, run_speed

        print("\n## Engine speed: median per call (±IQR as % of median), ratio to the NumPy floor")
        rows = run_speed(repeat=repeat, min_sample_s=min_sample_s)
        print(format_speed_table(rows))
        print(f"load average (1, 5, 15 min) after timing: {load_average()}, {info['cores']} cores")
        print("targets (issue 16):")
        print("\n".join(_targets(rows)))
        floor_784 = next(r.timings["numpy"].min_s for r in rows if "784" in r.name)
        _write_json(
            args.out, "engine_speed", {"machine": info, "rows": [r.as_dict() for r in rows]}
        )

    if "profile" in sections:
        from benchmarks.profile_engine import cprofile_engine_step, extra_work, format_extra_work

        print("\n## Profile: the engine's 784-256-10 float32 step beyond the floor")
        extra = extra_work(repeat=repeat)
        print(format_extra_work(extra, floor_784))
        print("\ncProfile of 200 engine steps, 784-256-10 float32 batch 128, by own time:")
        print(cprofile_engine_step())
        print("\ncProfile of 2000 engine steps, linear 3->1 float64 batch 16, by own time:")
        print(cprofile_engine_step((3, 1), 16, np.float64, steps=2000))
        _write_json(args.out, "profile", {"machine": info, "extra_work_s": extra})

    if "memory" in sections:
        from benchmarks.memory import format_memory_table, run_memory

        print("\n## Memory: tracemalloc, above the starting point, over 10 training steps")
        memory_rows = run_memory()
        print(format_memory_table(memory_rows))
        _write_json(
            args.out, "memory", {"machine": info, "rows": [r.as_dict() for r in memory_rows]}
        )

    if "grading" in sections:
        from benchmarks.grading_time import format_grading_table, run_grading

        print("\n## Grading throughput: wall time (demo cohort, nbgrader autograde; nbval)")
        sample = args.cohort_sample or None
        grading_rows = run_grading(args.out / "grading-workspace", sample=sample)
        print(format_grading_table(grading_rows))
        _write_json(
            args.out, "grading", {"machine": info, "rows": [r.as_dict() for r in grading_rows]}
        )

    if "autograde-parallel" in sections:
        from benchmarks.parallel_autograde import format_parallel_table, run_parallel_benchmark

        print(
            f"\n## Parallel autograde: {args.submissions} submissions of 00-recipe, "
            "sequential nbgrader against autograde on local and separate-process Dask clusters"
        )
        parallel_rows = run_parallel_benchmark(
            args.out / "parallel-autograde", submissions=args.submissions
        )
        print(format_parallel_table(parallel_rows))
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"load average (1, 5, 15 min) at the end: {load}")
        _write_json(
            args.out,
            "autograde_parallel",
            {"machine": info, "rows": [r.as_dict() for r in parallel_rows]},
        )

    if "notebooks" in sections:
        from benchmarks.notebook_time import format_notebook_table, read_baseline, time_notebooks

        print("\n## Notebooks: wall time to execute each solution notebook (nbclient)")
        if args.threads:  # the kernels are other processes: they read the count at start
            for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ[name] = str(args.threads)
        notebook_rows = time_notebooks(repeat=1 if args.quick else 3)
        before = read_baseline(args.baseline) if args.baseline else None
        print(format_notebook_table(notebook_rows, before))
        _write_json(
            args.out, "notebooks", {"machine": info, "rows": [r.as_dict() for r in notebook_rows]}
        )

    print(f"\nbenchmarks done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
