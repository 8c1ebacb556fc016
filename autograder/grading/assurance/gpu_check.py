"""``make gpu-check``: the check suite and every solution notebook with torch on CUDA.

Every ``check_parity`` call already compares against each available torch device, CUDA
included, with TF32 off. This runner makes that visible: it counts the torch runs of each
check by device and dtype (and whether TF32 was on during a CUDA run) in the pytest suite
and in each solution notebook, then prints a per-device summary. Without CUDA it says that
nothing ran on a GPU and why, and exits 0.

The counting listens to each torch run through the public hook
``autograder.checks.parity.add_torch_run_listener``: as a pytest plugin
(``-p autograder.grading.assurance.gpu_check``, writing one JSON file per process into the folder
named by ``AUTOGRAD_COURSE_GPU_LOG``) and, in notebooks, through a first cell that installs
the same listener in the kernel and a last cell that prints its counts.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from autograder.checks.text_table import format_columns
from autograder.grading.course.repo_paths import (
    REPO_ROOT,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)

LOG_ENV = "AUTOGRAD_COURSE_GPU_LOG"
COUNTS_MARKER = "gpu-check counts: "
NO_GPU = "gpu-check: nothing ran on a GPU"

# (device kind, dtype name, "tf32 on" or "") -> number of torch runs of a parity check
_counts: Counter[tuple[str, str, str]] = Counter()
# Removes the recorder from the parity module's torch-run listeners; None when not installed.
_remove_recorder: Callable[[], None] | None = None


def cuda_status() -> tuple[bool, str]:
    """Whether torch can use CUDA here, with the devices found or the reason it cannot."""
    if torch.version.cuda is None:
        return False, f"this torch build ({torch.__version__}) has no CUDA support"
    if not torch.cuda.is_available():
        return False, (
            f"torch {torch.__version__} is built for CUDA {torch.version.cuda}, but no CUDA "
            "device is usable (no GPU, no driver, or CUDA_VISIBLE_DEVICES hides it)"
        )
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    listed = ", ".join(f"cuda:{i} {name}" for i, name in enumerate(names))
    return True, f"torch {torch.__version__}, CUDA {torch.version.cuda}: {listed}"


def _record(device: str, dtype: str) -> None:
    # Called inside the run's settings, so the TF32 flag read here is the one it ran with.
    kind = device.split(":")[0]
    tf32 = kind == "cuda" and bool(torch.backends.cuda.matmul.allow_tf32)
    _counts[(kind, dtype, "tf32 on" if tf32 else "")] += 1


def install_recorder() -> None:
    """Count every torch run of ``check_parity`` by device, dtype and TF32 state."""
    global _remove_recorder
    from autograder.checks.parity import add_torch_run_listener

    if _remove_recorder is None:
        _remove_recorder = add_torch_run_listener(_record)


def uninstall_recorder() -> None:
    """Stop counting ``check_parity``'s torch runs and forget the counts."""
    global _remove_recorder
    if _remove_recorder is not None:
        _remove_recorder()
        _remove_recorder = None
    _counts.clear()


@contextmanager
def recording() -> Iterator[None]:
    """Count only the runs inside the block; an outer recorder (the plugin's) keeps its own.

    Inside, ``recorded_counts()`` shows the block's runs; afterwards they are added to
    whatever was being counted before, so the plugin's totals still include them.
    """
    was_installed = _remove_recorder is not None
    before = Counter(_counts)
    _counts.clear()
    install_recorder()
    try:
        yield
    finally:
        inside = Counter(_counts)
        if not was_installed:
            uninstall_recorder()
        _counts.clear()
        _counts.update(before + inside)


def recorded_counts() -> list[dict[str, Any]]:
    """The counts so far, as JSON-ready rows."""
    return [
        {"device": device, "dtype": dtype, "tf32": tf32, "runs": runs}
        for (device, dtype, tf32), runs in sorted(_counts.items())
    ]


# pytest plugin hooks: active only when pytest loads this module with -p.
def pytest_configure(config: Any) -> None:
    """Start counting in this pytest process (controller or xdist worker)."""
    if os.environ.get(LOG_ENV):
        install_recorder()


def pytest_unconfigure(config: Any) -> None:
    """Write this process's counts to the log folder."""
    folder = os.environ.get(LOG_ENV)
    if folder and _remove_recorder is not None:
        path = Path(folder) / f"tests-{os.getpid()}.json"
        path.write_text(json.dumps(recorded_counts()))
        uninstall_recorder()


def _merge(rows: list[dict[str, Any]], into: Counter[tuple[str, str, str]]) -> None:
    for row in rows:
        into[(row["device"], row["dtype"], row["tf32"])] += row["runs"]


def run_test_suite(
    paths: list[str], workers: int, log_dir: Path
) -> tuple[int, str, Counter[tuple[str, str, str]]]:
    """Run pytest on ``paths`` with the recorder; return exit code, last line and counts."""
    log_dir.mkdir(parents=True, exist_ok=True)
    for old in log_dir.glob("tests-*.json"):
        old.unlink()
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "autograder.grading.assurance.gpu_check",
    ]
    if workers > 1:
        command += ["-n", str(workers), "--dist", "loadfile"]
    command += paths
    env = dict(os.environ, **{LOG_ENV: str(log_dir), "JUPYTER_PREFER_ENV_PATH": "1"})
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    output = result.stdout + result.stderr
    skips = [line for line in output.splitlines() if line.startswith("SKIPPED")]
    if result.returncode != 0:
        print(output[-6000:])
    elif skips:
        print("\n".join(skips))
    counts: Counter[tuple[str, str, str]] = Counter()
    for path in log_dir.glob("tests-*.json"):
        _merge(json.loads(path.read_text()), counts)
    lines = output.strip().splitlines() or ["(no output)"]
    return result.returncode, lines[-1].strip("= "), counts


_SETUP_CELL = (
    "import autograder.grading.assurance.gpu_check as _gpu_check\n_gpu_check.install_recorder()"
)
_REPORT_CELL = (
    f"import json as _json\nprint({COUNTS_MARKER!r} + _json.dumps(_gpu_check.recorded_counts()))"
)


def run_notebook(path: Path, timeout: int = 300) -> tuple[str, Counter[tuple[str, str, str]]]:
    """Execute one notebook with the recorder; return "" or the error, and the counts."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(_SETUP_CELL))
    notebook.cells.append(nbformat.v4.new_code_cell(_REPORT_CELL))
    client = nbclient.NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    error = ""
    try:
        client.execute()
    except Exception as exc:  # a failing cell: report it, and keep going with other notebooks
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300]}"
    counts: Counter[tuple[str, str, str]] = Counter()
    for output in notebook.cells[-1].get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(COUNTS_MARKER):
                _merge(json.loads(line[len(COUNTS_MARKER) :]), counts)
    return error, counts


def format_summary(sources: dict[str, Counter[tuple[str, str, str]]]) -> str:
    """Torch runs of parity checks per source and device, by dtype; TF32-on runs counted apart."""
    dtypes = sorted({dtype for counts in sources.values() for _, dtype, _ in counts})
    header = ["source", "device", *dtypes, "tf32 on"]
    rows = []
    for source, counts in sources.items():
        devices = sorted({device for device, _, _ in counts}) or ["-"]
        for device in devices:
            cells = [source, device]
            for dtype in dtypes:
                cells.append(
                    str(sum(n for (d, t, _), n in counts.items() if (d, t) == (device, dtype)))
                )
            cells.append(str(sum(n for (d, _, tf), n in counts.items() if d == device and tf)))
            rows.append(cells)
    return "\n".join(format_columns(header, rows, right=range(2, len(header))))


def problems(sources: dict[str, Counter[tuple[str, str, str]]], require_cuda: bool) -> list[str]:
    """What makes the GPU check fail: TF32 on in a CUDA run, or checks that skipped CUDA."""
    found = []
    for source, counts in sources.items():
        tf32_runs = sum(n for (_, _, tf32), n in counts.items() if tf32)
        if tf32_runs:
            found.append(f"{source}: {tf32_runs} CUDA run(s) with TF32 on")
        cuda = {dtype for (device, dtype, _), n in counts.items() if device == "cuda" and n}
        # A notebook without parity checks (an explanation-only one) has nothing to run there.
        if require_cuda and sum(counts.values()) and not cuda:
            found.append(f"{source}: no parity check ran on CUDA")
        if require_cuda and source == "tests" and not {"float32", "float64"} <= cuda:
            found.append(f"tests: CUDA checks ran in {sorted(cuda)}, not float32 and float64")
    return found


def main(argv: list[str] | None = None) -> int:
    """Run the suite and the solution notebooks, print the per-device summary; 0 when fine."""
    parser = argparse.ArgumentParser(
        prog="python -m autograder.grading.assurance.gpu_check", description=__doc__
    )
    parser.add_argument("--cpu", action="store_true", help="run even without CUDA (a dry run)")
    parser.add_argument("--tests", nargs="*", default=["tests"], help="pytest paths")
    parser.add_argument("--notebooks", nargs="*", type=Path, default=None, help="notebooks")
    parser.add_argument("-n", "--workers", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--log-dir", type=Path, default=REPO_ROOT / "build" / "gpu-check")
    args = parser.parse_args(argv)

    cuda_ok, reason = cuda_status()
    if not cuda_ok and not args.cpu:
        print(f"{NO_GPU}: {reason}.")
        print("Here the checks compare against torch on the CPU only; `make test` runs them.")
        return 0
    print(f"gpu-check: {reason}" if cuda_ok else f"gpu-check --cpu (dry run): {reason}")
    os.environ["JUPYTER_PREFER_ENV_PATH"] = "1"
    started = time.perf_counter()
    sources: dict[str, Counter[tuple[str, str, str]]] = {}
    failures = []
    if args.tests:
        code, last_line, counts = run_test_suite(args.tests, args.workers, args.log_dir)
        sources["tests"] = counts
        print(f"pytest: {last_line}")
        if code != 0:
            failures.append(f"pytest exited {code}: {last_line}")
    notebooks = args.notebooks
    if notebooks is None:
        notebooks = [notebook_path(SOLUTIONS_DIR, a) for a in assignments()]
    for path in notebooks:
        error, counts = run_notebook(path)
        sources[path.stem] = counts
        print(f"notebook {path.stem}: {'ok' if not error else 'FAILED: ' + error}")
        if error:
            failures.append(f"{path.stem}: {error}")

    print("\nTorch runs of parity checks, by source, device and dtype (TF32 off expected):")
    print(format_summary(sources))
    failures += problems(sources, require_cuda=cuda_ok)
    elapsed = time.perf_counter() - started
    if failures:
        print(f"\ngpu-check FAILED in {elapsed:.0f} s:\n  " + "\n  ".join(failures))
        return 1
    where = "on CUDA and the CPU" if cuda_ok else "on the CPU only (dry run: no GPU here)"
    print(f"\ngpu-check passed {where} in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
