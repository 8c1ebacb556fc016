"""Run a notebook's visible checks on a wrong answer, the way a student meets them.

A ``WrongAnswer`` is one mistake a student could make in one exercise (a text rewrite of the
reference solution), the visible check cell that must fail on it, and words its message must
hold so the student knows what to fix. ``run_wrong_answers`` builds each wrong notebook (the
student release with the reference typed in, then the mistake), runs its cells in order in an
IPython shell up to the check, and reports how the check ended. One process per assignment
runs that assignment's mistakes one after another, each in a fresh namespace.
"""

import copy
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.grading.authoring.engine_sync import SOLUTION_MARKERS
from autograder.grading.course.repo_paths import COURSE_DIR, SOLUTIONS_DIR, notebook_path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class WrongAnswer:
    """A mistake in one exercise, and how its visible check must say so."""

    name: str  # what the student got wrong, in a few words
    assignment: str
    cell: str  # grade_id of the solution cell
    old: str  # text of the reference answer (markers cut), exactly once in the cell
    new: str
    check: str  # grade_id of the visible check cell that must fail
    says: str  # words the failure's message must hold


def solved(release: nbformat.NotebookNode, solution: nbformat.NotebookNode):
    """The release with each answer cell as the solution notebook has it, markers cut: what
    a student who typed the reference in would have (the visible tests stay the release's)."""
    answers = {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in solution.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    notebook = copy.deepcopy(release)
    for cell in notebook.cells:
        spec = cell.metadata.get("nbgrader", {})
        if spec.get("solution"):
            lines = answers[spec["grade_id"]].split("\n")
            kept = [line for line in lines if not any(m in line for m in SOLUTION_MARKERS)]
            cell.source = "\n".join(kept)
    return notebook


def grade_id(cell: nbformat.NotebookNode) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def wrong_notebook(
    wrong: WrongAnswer | None, assignment: str, edition: tuple[Path, Path] | None = None
) -> tuple[list[str], int]:
    """The code cells up to and including the check, with the mistake typed in, and the
    check's index among them (``wrong=None``: the reference typed in, for a baseline)."""
    release_dir, solutions_dir = edition or (COURSE_DIR, SOLUTIONS_DIR)
    release = nbformat.read(notebook_path(release_dir, assignment), as_version=4)
    solution = nbformat.read(notebook_path(solutions_dir, assignment), as_version=4)
    notebook = solved(release, solution)
    if wrong is not None:
        cell = next(c for c in notebook.cells if grade_id(c) == wrong.cell)
        found = cell.source.count(wrong.old)
        assert found == 1, f"{wrong.name}: {wrong.old!r} occurs {found} times in {wrong.cell}"
        cell.source = cell.source.replace(wrong.old, wrong.new)
    sources = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        sources.append(cell.source)
        if wrong is not None and grade_id(cell) == wrong.check:
            return sources, len(sources) - 1
    if wrong is not None:
        raise AssertionError(f"{wrong.name}: no check cell {wrong.check!r} in {assignment}")
    return sources, len(sources) - 1


# Runs in its own process: the reference typed in, cell after cell; just before the first cell
# a mistake changes, a fork runs the mistake's cells from there to its check (the namespace up
# to that cell is the same), so the cells before it run once for every mistake. The baseline
# stops at its first error, or (keep_going) runs every cell and records each error. Tracebacks
# are not printed (they show the code, not what a student reads as a message). One thread per
# library: a fork of a process whose thread pools have started can hang.
RUNNER = r"""
import contextlib, io, json, os, sys
os.environ.setdefault("MPLBACKEND", "Agg")
from IPython.core.interactiveshell import InteractiveShell

baseline, variants, keep_going = json.loads(sys.stdin.read())
shell = InteractiveShell.instance()
shell.showtraceback = lambda *args, **kwargs: None


def run_cell(source):
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        result = shell.run_cell(source, silent=False, store_history=False)
    return captured.getvalue(), result.error_before_exec or result.error_in_exec


def outcome():
    return {"cell": None, "error": None, "message": "", "output": "", "errors": []}


def record(ran, index, output, error):
    ran["output"] += output
    if error is None:
        return False
    ran["errors"].append([index, type(error).__name__, str(error)])
    if ran["cell"] is None:
        ran.update(cell=index, error=type(error).__name__, message=str(error))
    return True


def run(cells, first):
    ran = outcome()
    for index in range(first, len(cells)):
        if record(ran, index, *run_cell(cells[index])):
            break
    return ran


def fork_and_run(cells, first):
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(reader)
        data = json.dumps(run(cells, first)).encode()
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(data)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        data = pipe.read()
    os.waitpid(child, 0)
    died = dict(outcome(), cell=first, error="Crash", message="the run died")
    return json.loads(data) if data else died


def first_difference(cells):
    for index, (ours, theirs) in enumerate(zip(cells, baseline)):
        if ours != theirs:
            return index
    return min(len(cells), len(baseline))


starts = [first_difference(cells) for cells, _ in variants]
results = [None] * len(variants)
base = outcome()
for index in range(len(baseline) + 1):
    for number, ((cells, check), start) in enumerate(zip(variants, starts)):
        if start == index and results[number] is None:
            results[number] = fork_and_run(cells[: check + 1], start)
    if index < len(baseline) and record(base, index, *run_cell(baseline[index])):
        if not keep_going:
            break
missing = dict(outcome(), error="NotRun", message="the reference failed first")
print(json.dumps([base, *(r or missing for r in results)]))
"""

ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def run_variants(
    baseline: list[str],
    variants: list[tuple[list[str], int]],
    folder: Path = REPO,
    keep_going: bool = False,
) -> tuple[dict, list[dict]]:
    """How the reference typed in ran (``baseline``: code cells), and how each variant (its
    cells, the index of its check) ran up to its check: the first cell that raised, the
    error's class and message, every error (``errors``; the baseline's all of them when
    ``keep_going``), and what its cells printed from where it differs. They run in
    ``folder`` (the progress table reads the notebook's file there)."""
    done = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps([baseline, variants, keep_going]),
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=900,
        check=False,
        env={**os.environ, **ONE_THREAD},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    base, *outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    return base, outcomes


def failures(wrongs: list[WrongAnswer], assignment: str) -> list[str]:
    """Each mistake whose visible check does not fail as it must, one line each; the
    reference typed in must get through every cell up to the last of those checks first."""
    baseline, _ = wrong_notebook(None, assignment)
    jobs = [wrong_notebook(w, assignment) for w in wrongs]
    last_check = max((check for _, check in jobs), default=len(baseline) - 1)
    base, outcomes = run_variants(baseline[: last_check + 1], jobs)
    if base["cell"] is not None:
        return [f"the reference typed in fails cell {base['cell']}: {base['message']}"]
    problems = []
    for wrong, (_cells, check), outcome in zip(wrongs, jobs, outcomes, strict=True):
        if outcome["cell"] is None:
            problems.append(f"{wrong.name}: {wrong.check} passes")
        elif outcome["cell"] != check:
            problems.append(
                f"{wrong.name}: cell {outcome['cell']} raised before the check "
                f"({outcome['error']}: {outcome['message'][:300]})"
            )
        elif wrong.says not in outcome["message"]:
            problems.append(
                f"{wrong.name}: {wrong.check} fails without {wrong.says!r}: "
                f"{outcome['error']}: {outcome['message'][:500]}"
            )
    return problems
