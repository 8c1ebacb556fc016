"""A job's Status from how nbgrader ended: its output when it saved no grades,
the error outputs of the autograded notebooks when it did (nbgrader grades on past a
timed-out or out-of-memory cell)."""

import signal
from pathlib import Path

import nbformat

from autograder.grading.course.grading_status import Status


def classify_failure(returncode: int, output: str) -> tuple[Status, str]:
    """Status and message of an nbgrader run that saved no grades, from its output."""
    if "DeadKernelError" in output or "Kernel died" in output:
        return Status.KERNEL_DIED, "the kernel died while running the notebook; no cell was graded"
    if "CellTimeoutError" in output or "UnresponsiveKernelError" in output:
        return Status.TIMEOUT, "a cell timed out and the kernel did not recover; no cell was graded"
    if "MemoryError" in output:
        return Status.MEMORY, "out of memory outside a cell; no cell was graded"
    if returncode < 0:
        return Status.ERROR, f"nbgrader was killed by {signal.Signals(-returncode).name}"
    lines = [line for line in output.splitlines() if "Error" in line or "error" in line]
    return Status.ERROR, (lines[-1].strip() if lines else f"nbgrader exited with {returncode}")


def error_cells_by_name(notebook_path: Path) -> dict[str, list[str]]:
    """Error name -> ids of the cells whose outputs show that error, in one notebook."""
    notebook = nbformat.read(notebook_path, as_version=4)
    errors: dict[str, list[str]] = {}
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                errors.setdefault(output.get("ename", ""), []).append(grade_id or f"#{index}")
    return errors


def classify_graded(autograded: Path) -> tuple[Status, str]:
    """``graded``, or ``timeout``/``memory`` when a cell of the notebooks in ``autograded``
    hit a limit (nbgrader graded on, those cells failing)."""
    errors: dict[str, list[str]] = {}
    for notebook in sorted(autograded.glob("*.ipynb")):
        for name, cells in error_cells_by_name(notebook).items():
            errors.setdefault(name, []).extend(cells)
    if "CellTimeoutError" in errors:
        cells = ", ".join(errors["CellTimeoutError"])
        return Status.TIMEOUT, f"cell timeout in {cells}; graded, those cells as failed"
    if "MemoryError" in errors:
        cells = ", ".join(errors["MemoryError"])
        return Status.MEMORY, f"MemoryError in {cells}; graded, those cells as failed"
    # A check that lends the reference's parts to a copy of the kernel, refused or ended by
    # what the copy was (autograder.grading.pipeline.verdicts.lending): graded, and said here.
    said = [
        f"{what} in {', '.join(errors[name])}"
        for name, what in (("LendingRefused", "lending refused"), ("CopyDied", "copy died"))
        if name in errors
    ]
    return Status.GRADED, "; ".join(said)
