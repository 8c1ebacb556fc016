"""How long each solution notebook takes to execute top to bottom (nbclient, this Python's
kernel): the time a student waits for "Run All", nbval spends per notebook and every graded
submission costs at least. Each notebook runs in a scratch copy of its folder, so files it
writes never land in the repository. A baseline row (an empty notebook) shows the kernel's
start, which every row includes. Wall time counts what other processes took from the kernel
on a loaded machine; the kernel's own CPU time (read from /proc at the end) does not, so
both are shown. ``--baseline`` adds the times of an earlier run's JSON as a
"before" column.
"""

import json
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from autograder.grading.course.repo_paths import SOLUTIONS_DIR

EMPTY = "kernel start (empty notebook)"


@dataclass(frozen=True)
class NotebookRow:
    """One notebook's run: its name, code cells, and the wall and kernel CPU seconds of each
    repeat."""

    notebook: str
    code_cells: int
    seconds: list[float]
    cpu_seconds: list[float]

    @property
    def median_s(self) -> float:
        """The median wall time over the repeats."""
        return statistics.median(self.seconds)

    @property
    def median_cpu_s(self) -> float:
        """The median kernel CPU time over the repeats."""
        return statistics.median(self.cpu_seconds)

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data, with its medians."""
        return {**asdict(self), "median_s": self.median_s, "median_cpu_s": self.median_cpu_s}


def solution_notebooks(folder: Path = SOLUTIONS_DIR) -> list[Path]:
    """Every solution notebook, in course order (``NN-name/NN-name.ipynb``)."""
    return sorted(p for p in folder.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(
    notebook: nbformat.NotebookNode, folder: Path, timeout: int = 900
) -> tuple[float, float]:
    """Wall seconds to start a kernel and execute ``notebook`` in a scratch copy of ``folder``,
    and the kernel's CPU seconds (start included)."""
    with tempfile.TemporaryDirectory(prefix="nbtime-") as scratch:
        work = Path(scratch) / folder.name
        shutil.copytree(folder, work, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        client = NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(work)}},
        )
        started = time.perf_counter()
        with client.setup_kernel():
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
            cpu = cpu_seconds(client.km.provisioner.process.pid)
        return time.perf_counter() - started, cpu


def time_notebooks(paths: list[Path] | None = None, repeat: int = 1) -> list[NotebookRow]:
    """The baseline row, then one row per notebook, each executed ``repeat`` times."""
    # "python3" must be this environment's kernel, not one in the user's home folder.
    os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    paths = solution_notebooks() if paths is None else paths
    empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
    with tempfile.TemporaryDirectory(prefix="nbtime-empty-") as folder:
        runs = [run_once(empty, Path(folder)) for _ in range(repeat)]
    rows = [NotebookRow(EMPTY, 1, [w for w, _ in runs], [c for _, c in runs])]
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        cells = sum(1 for cell in notebook.cells if cell.cell_type == "code")
        runs = [run_once(nbformat.read(path, as_version=4), path.parent) for _ in range(repeat)]
        rows.append(NotebookRow(path.stem, cells, [w for w, _ in runs], [c for _, c in runs]))
    return rows


def read_baseline(path: Path) -> dict[str, float]:
    """``notebook -> median kernel CPU seconds`` from an earlier run's notebooks.json."""
    rows = json.loads(path.read_text())["rows"]
    return {row["notebook"]: float(row["median_cpu_s"]) for row in rows}


def format_notebook_table(rows: list[NotebookRow], before: dict[str, float] | None = None) -> str:
    """The table: notebook, code cells, median wall and kernel CPU time; with a baseline, the
    CPU time before and the ratio."""
    from autograder.checks.text_table import format_columns

    header = ["notebook", "code cells", "wall (median)", "kernel CPU (median)"]
    if before:
        header += ["CPU before", "after/before"]

    def line(name: str, cells: int, wall: float, cpu: float) -> list[str]:
        cols = [name, str(cells), f"{wall:.1f} s", f"{cpu:.1f} s"]
        if before is not None:
            old = (
                before.get(name)
                if name != "total"
                else sum(v for k, v in before.items() if k != EMPTY)
            )
            cols += ["-", "-"] if not old else [f"{old:.1f} s", f"{cpu / old:.2f}"]
        return cols

    body = [line(r.notebook, r.code_cells, r.median_s, r.median_cpu_s) for r in rows]
    notebooks = [r for r in rows if r.notebook != EMPTY]
    wall = sum(r.median_s for r in notebooks)
    cpu = sum(r.median_cpu_s for r in notebooks)
    body.append(line("total", sum(r.code_cells for r in notebooks), wall, cpu))
    return "\n".join(format_columns(header, body, right=set(range(1, len(header)))))
