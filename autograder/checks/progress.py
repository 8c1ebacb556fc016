"""The progress cell: which exercises of this notebook pass their visible checks.

The last cell of each notebook calls ``show_progress(globals(), "NN-slug.ipynb")``. It reads
the notebook file (from the kernel's working folder, which is the notebook's own folder in
JupyterLab, nbgrader and nbval), takes every graded test cell, keeps the part a student
sees (any hidden-test block is dropped), re-runs it in a copy of the notebook's variables
and shows one row per check: pass, fail (with the first line of the error) or not attempted
(the code it needs still raises NotImplementedError, or was never run).

It never raises: a progress report must not stop "Run All" or count in a grade. The re-run
leaves the notebook's variables and random generators (NumPy and torch) as they were, and
prints nothing but the table.
"""

import contextlib
import copy
import io
import json
import os
import re
import time
import traceback
import warnings
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.checks import display
from autograder.checks.exercises import label_by_test
from autograder.checks.hidden_tests import split_hidden_tests
from autograder.checks.language import marked, number, tr, translated
from autograder.checks.templating import render

# Statuses as data (English, as tests and tools read them); shown through tr().
PASS, FAIL, NOT_ATTEMPTED = marked("pass"), marked("fail"), marked("not attempted")

_HEADING = re.compile(r"^#{1,6}\s+(.*\S)\s*$", re.MULTILINE)
_STATUS_COLOURS = {PASS: "#1a7f37", FAIL: "#cf222e", NOT_ATTEMPTED: "#59636e"}


@dataclass(frozen=True)
class Check:
    """One graded test cell as a student sees it."""

    grade_id: str
    exercise: str  # what the student writes for it (the nearest heading outside the course)
    points: float
    source: str  # visible part only


@dataclass(frozen=True)
class Result:
    check: Check
    status: str  # PASS, FAIL or NOT_ATTEMPTED
    detail: str = ""


def visible_source(source: str) -> str:
    """A test cell's source without its hidden-test blocks (what the release shows)."""
    return split_hidden_tests(source)[0].rstrip() + "\n"


def read_checks(notebook_path: str | os.PathLike[str]) -> list[Check]:
    """The graded test cells of a notebook, in order, each with the exercise it checks."""
    # Plain JSON, not nbformat: the student kit's kernel has no Jupyter libraries beyond
    # IPython, and a version-4 notebook's cells need nothing more than this.
    with open(os.fspath(notebook_path), encoding="utf-8") as file:
        notebook = json.load(file)
    checks: list[Check] = []
    # A course notebook names each check by its exercise (a section heading can cover
    # several); another notebook by the heading it sits under.
    labels = label_by_test(Path(notebook_path).stem)
    heading = ""
    for cell in notebook.get("cells", []):
        source = _cell_source(cell)
        if cell.get("cell_type") == "markdown":
            headings = _HEADING.findall(source)
            if headings:
                heading = headings[-1].replace("`", "")
            continue
        spec = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and spec.get("grade") and not spec.get("solution"):
            checks.append(
                Check(
                    grade_id=str(spec.get("grade_id", cell.get("id", "?"))),
                    exercise=labels.get(str(spec.get("grade_id")), heading),
                    points=float(spec.get("points", 0) or 0),
                    source=visible_source(source),
                )
            )
    return checks


def _cell_source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (the file may store it as a list of lines)."""
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _find_notebook(notebook: str | os.PathLike[str] | None, namespace: Mapping[str, Any]) -> Path:
    """The notebook file: as given (relative to the working folder), else the kernel's session."""
    candidates = []
    if notebook is not None:
        candidates.append(Path(notebook))
    session = namespace.get("__session__") or os.environ.get("JPY_SESSION_NAME")
    if session:
        candidates.append(Path(str(session)))
    for path in candidates:
        if path.is_file():
            return path
    names = ", ".join(str(p) for p in candidates) or "no notebook name given"
    raise FileNotFoundError(f"notebook file not found ({names}) in {Path.cwd()}")


@contextlib.contextmanager
def _random_state_kept() -> Iterator[None]:
    """Restore NumPy's global and torch's CPU random state after the block."""
    import numpy as np

    numpy_state = np.random.get_state()
    try:
        import torch
    except ImportError:  # torch is a dependency, but a progress table must not need it
        torch = None
    torch_state = torch.random.get_rng_state() if torch is not None else None
    try:
        yield
    finally:
        np.random.set_state(numpy_state)
        if torch is not None:
            torch.random.set_rng_state(torch_state)


def _scratch_namespace(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the variables where a check may assign freely; random generators are copied
    so the notebook's own streams do not advance."""
    import numpy as np

    scratch = dict(namespace)
    for name, value in scratch.items():
        if isinstance(value, np.random.Generator | np.random.RandomState):
            scratch[name] = copy.deepcopy(value)
    return scratch


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _raised_not_implemented(exc: BaseException) -> bool:
    """True when NotImplementedError is the error or any error in its chain."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, NotImplementedError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _compile(source: str, grade_id: str):
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:  # a cell may use IPython syntax; turn it into Python first
            source = shell.transform_cell(source)
    except ImportError:
        pass
    return compile(source, f"<check {grade_id}>", "exec")


def run_check(check: Check, namespace: Mapping[str, Any]) -> Result:
    """Run one check's visible code in a scratch copy of ``namespace``; never raises."""
    try:
        code = _compile(check.source, check.grade_id)
        with (
            display.silenced(),
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
            warnings.catch_warnings(),
            _random_state_kept(),
        ):
            warnings.simplefilter("ignore")
            exec(code, _scratch_namespace(namespace))
    except NameError as exc:
        return Result(
            check, NOT_ATTEMPTED, tr("not run yet: {error} (run the cells above)", error=exc)
        )
    except KeyboardInterrupt:  # the student stopped it: stop
        raise
    except BaseException as exc:  # SystemExit too: a check that exits has not passed
        if _raised_not_implemented(exc):
            return Result(check, NOT_ATTEMPTED, tr("your code still raises NotImplementedError"))
        return Result(check, FAIL, _first_line(exc))
    return Result(check, PASS)


def collect(namespace: Mapping[str, Any], notebook: str | os.PathLike[str] | None) -> list[Result]:
    """Run every visible check of the notebook against ``namespace``."""
    return [
        run_check(check, namespace) for check in read_checks(_find_notebook(notebook, namespace))
    ]


def _summary(results: list[Result]) -> str:
    counts = {status: sum(r.status == status for r in results) for status in _STATUS_COLOURS}
    return tr(
        "{passed} of {total} checks pass, {failed} fail, {not_attempted} not attempted "
        "(visible checks only: your grade also uses hidden tests)",
        passed=counts[PASS],
        total=len(results),
        failed=counts[FAIL],
        not_attempted=counts[NOT_ATTEMPTED],
    )


def _columns() -> tuple[str, ...]:
    return (tr("exercise"), tr("check"), tr("points"), tr("result"), tr("detail"))


def format_text(results: list[Result]) -> str:
    """The progress table as plain text."""
    from autograder.checks.text_table import format_columns

    rows = [
        (r.check.exercise, r.check.grade_id, f"{r.check.points:g}", translated(r.status), r.detail)
        for r in results
    ]
    lines = [tr("progress") + f": {_summary(results)}"]
    lines += format_columns(_columns(), rows, indent="  ")
    return "\n".join(line.rstrip() for line in lines)


def format_html(results: list[Result]) -> str:
    """The progress table as a small HTML block (inline styles, everything escaped)."""
    rows = [
        {
            "status": r.status,
            "shown_status": translated(r.status),
            "colour": _STATUS_COLOURS[r.status],
            "exercise": r.check.exercise,
            "grade_id": r.check.grade_id,
            "points": f"{r.check.points:g}",
            "detail": r.detail,
        }
        for r in results
    ]
    return render(
        "progress.html",
        title=tr("Progress"),
        summary=_summary(results),
        columns=_columns(),
        rows=rows,
    )


def show_progress(
    namespace: MutableMapping[str, Any], notebook: str | os.PathLike[str] | None = None
) -> None:
    """Show this notebook's exercises with pass / fail / not attempted; never raises.

    ``namespace`` is the notebook's ``globals()``; ``notebook`` its file name (looked up in
    the working folder; default: the kernel's session path). Returns None, so a cell ending
    with this call shows only the table; ``collect`` gives the results themselves.
    """
    try:
        started = time.perf_counter()
        results = collect(namespace, notebook)
        elapsed = number(time.perf_counter() - started, ".1f")
        text = format_text(results) + "\n" + tr("(checked in {seconds} s)", seconds=elapsed)
        if display.in_kernel():
            from IPython.display import display as ipython_display

            ipython_display({"text/plain": text, "text/html": format_html(results)}, raw=True)
        else:
            print(text)
    except Exception as exc:  # never stop "Run All" here
        detail = "".join(traceback.format_exception_only(exc)).strip()
        print(tr("progress: could not check this notebook ({detail})", detail=detail))
