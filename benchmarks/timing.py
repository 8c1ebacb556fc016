"""Timing helpers shared by the benchmarks: interleaved samples, robust statistics, machine info.

Implementations of one workload are timed in interleaved rounds (engine, floor, torch, then
again in rotated order), so that a burst of load from another process slows all of them
rather than one, and the ratios between their medians stay meaningful on a shared machine.
"""

import ctypes
import gc
import glob
import os
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch


@dataclass(frozen=True)
class Timing:
    """Seconds per call of one implementation: median, quartiles and minimum over samples."""

    median_s: float
    q1_s: float
    q3_s: float
    min_s: float
    samples: int
    calls_per_sample: int

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s

    def as_dict(self) -> dict[str, float]:
        """The timing as plain numbers, for the JSON output."""
        return {**asdict(self), "iqr_s": self.iqr_s}


# The clock of every timing: wall time by default. On one thread, ``use_cpu_time`` switches to
# the process's CPU time, which leaves out the time spent waiting for a core while other
# processes run, the largest source of noise on a shared machine.
CLOCK: dict[str, Callable[[], float]] = {"clock": time.perf_counter}


def use_cpu_time(on: bool = True) -> None:
    """Time with the process's CPU time (only meaningful when all work runs on one thread)."""
    CLOCK["clock"] = time.process_time if on else time.perf_counter


def _per_call_seconds(fn: Callable[[], Any], number: int) -> float:
    clock = CLOCK["clock"]
    start = clock()
    for _ in range(number):
        fn()
    return (clock() - start) / number


def measure_interleaved(
    fns: Mapping[str, Callable[[], Any]], *, repeat: int = 21, min_sample_s: float = 0.02
) -> dict[str, Timing]:
    """Time each zero-argument callable in interleaved rounds; return its per-call statistics.

    Each sample runs a callable enough times to last about ``min_sample_s``, so that timer
    resolution and loop overhead do not matter even for microsecond-sized workloads.
    """
    numbers = {}
    for name, fn in fns.items():
        for _ in range(3):  # warm-up: first calls pay for allocation and lazy imports
            fn()
        once = max(_per_call_seconds(fn, 20), 1e-7)
        numbers[name] = max(1, int(min_sample_s / once))
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    gc.collect()
    for round_index in range(repeat):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(_per_call_seconds(fns[name], numbers[name]))
    timings = {}
    for name in names:
        values = np.array(samples[name])
        q1, median, q3 = np.percentile(values, [25, 50, 75])
        timings[name] = Timing(
            float(median), float(q1), float(q3), float(values.min()), repeat, numbers[name]
        )
    return timings


def _openblas_function(name: str) -> Any:
    """A function of the OpenBLAS that NumPy's wheel ships (symbols may carry a prefix), or None."""
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*"))
    for path in sorted(libs):
        if "openblas" not in os.path.basename(path):
            continue
        lib = ctypes.CDLL(path)
        for prefix in ("scipy_openblas_", "openblas_"):
            for suffix in ("64_", ""):
                function = getattr(lib, f"{prefix}{name}{suffix}", None)
                if function is not None:
                    return function
    return None


def openblas_core() -> str:
    """The OpenBLAS kernel NumPy's BLAS picked at run time (e.g. Haswell, SkylakeX), if known."""
    try:  # threadpoolctl reports it properly where installed
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            if info.get("internal_api") == "openblas":
                return f"{info.get('architecture')} ({info.get('num_threads')} threads)"
    except ImportError:
        pass
    # Otherwise ask OpenBLAS itself, as threadpoolctl would.
    corename = _openblas_function("get_corename")
    if corename is None:
        return "unknown (no OpenBLAS found in numpy.libs)"
    corename.restype = ctypes.c_char_p
    threads = _openblas_function("get_num_threads")
    count = f" ({threads()} threads)" if threads is not None else ""
    return corename().decode() + count


def set_threads(count: int) -> None:
    """Use ``count`` threads in NumPy's OpenBLAS and in torch (both default to every core)."""
    torch.set_num_threads(count)
    setter = _openblas_function("set_num_threads")
    if setter is not None:
        setter.argtypes = [ctypes.c_int]
        setter(count)


def numpy_blas() -> str:
    """NumPy's BLAS library and version, from its build configuration."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except (TypeError, KeyError):  # older NumPy: show_config has no dict mode
        return "unknown"


def load_average() -> str:
    """The machine's load average over 1, 5 and 15 minutes (as ``uptime``), or why unknown."""
    try:
        return ", ".join(f"{load:.2f}" for load in os.getloadavg())
    except OSError:
        return "unknown"


def machine_info() -> dict[str, Any]:
    """Where the numbers come from: CPU, core count, library versions, BLAS kernel and threads."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numpy_blas": numpy_blas(),
        "openblas_core": openblas_core(),
        "openblas_env": {
            key: os.environ[key]
            for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
            if key in os.environ
        },
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "torch_blas": "mkl" if torch.backends.mkl.is_available() else "other",
        "load_average": load_average(),
    }
