"""Wall time of grading: the demo cohort's nbgrader autograde per notebook, and the nbval suite.

This replays what ``autograd-course demo`` does (release, build the cohort's submissions,
``nbgrader autograde`` one notebook after the other, export) in its own workspace under
build/bench/, timing each stage, without publishing the release over course/. Parallel
autograding belongs to the instructor-tooling issue, which has not landed: it is reported
as pending rather than guessed.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from autograder.grading.course.nbgrader_workspace import kernel_environment, run_nbgrader
from autograder.grading.course.repo_paths import REPO_ROOT, SOLUTIONS_DIR, assignments

PARALLEL_ELSEWHERE = (
    "see the autograde-parallel section (python -m benchmarks.run autograde-parallel)"
)


@dataclass(frozen=True)
class GradingRow:
    """One timed stage of grading: what ran, on how many notebooks, and how long it took."""

    stage: str
    notebooks: int
    seconds: float
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The row for the JSON output."""
        return asdict(self)


def time_demo_autograde(workspace: Path, sample: int | None = None) -> list[GradingRow]:
    """Release, build the demo cohort, autograde each notebook in turn, export; time each.

    ``sample`` grades only the first students of the cohort (reference, blank, then the
    planted bugs); None grades everyone, as ``autograd-course demo`` does.
    """
    from autograder.grading.assurance.cohort import write_cohort
    from autograder.grading.authoring.release import generate_release

    ids = assignments()
    rows = []
    started = time.perf_counter()
    course = generate_release(workspace, ids)
    released = time.perf_counter() - started
    rows.append(GradingRow("generate_assignment (release)", len(ids), released))
    started = time.perf_counter()
    submitted = course.submitted
    cohort = write_cohort(submitted, SOLUTIONS_DIR, course.release)
    graded = cohort if sample is None else cohort[:sample]
    for student in cohort[len(graded) :]:
        shutil.rmtree(submitted / student)
    # Students hand in different notebooks (a planted bug only its own): count per notebook.
    submissions = {a: len(list(submitted.glob(f"*/{a}"))) for a in ids}
    built = time.perf_counter() - started
    rows.append(GradingRow("build cohort submissions", sum(submissions.values()), built))
    total = 0.0
    for assignment in ids:
        started = time.perf_counter()
        run_nbgrader(workspace, "autograde", assignment, "--force")
        seconds = time.perf_counter() - started
        total += seconds
        count = submissions[assignment]
        per_submission = f"{seconds / count:.2f} s per submission" if count else "no submissions"
        rows.append(GradingRow(f"autograde {assignment}", count, seconds, per_submission))
    note = f"{len(graded)} of {len(cohort)} students, {len(ids)} notebooks"
    if len(graded) < len(cohort):
        note += " (a sample: --cohort-sample 0 grades everyone)"
    rows.append(GradingRow("autograde, sequential (all)", sum(submissions.values()), total, note))
    rows.append(GradingRow("autograde, parallel", 0, float("nan"), PARALLEL_ELSEWHERE))
    started = time.perf_counter()
    run_nbgrader(workspace, "export", "--to", str(workspace / "grades.csv"))
    exported = time.perf_counter() - started
    rows.append(GradingRow("export grades", sum(submissions.values()), exported))
    return rows


def time_nbval_suite(paths: list[str] | None = None) -> GradingRow:
    """Time ``pytest solutions --nbval-lax --nbval-current-env`` as the test suite runs it."""
    paths = paths or [str(SOLUTIONS_DIR.relative_to(REPO_ROOT))]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths]
    command += ["--nbval-lax", "--nbval-current-env"]
    env = kernel_environment()
    env["JUPYTER_PREFER_ENV_PATH"] = "1"
    started = time.perf_counter()
    result = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    tail = (result.stdout.strip().splitlines() or ["(no output)"])[-1]
    outcome = re.sub(r"=+", "", tail).strip()
    if result.returncode != 0:
        outcome = f"FAILED (exit {result.returncode}): {outcome}"
    found = [Path(REPO_ROOT, p) for p in paths]
    notebooks = sum(1 for p in found if p.is_file()) + sum(
        1
        for folder in found
        for path in folder.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in path.parts
    )
    return GradingRow("nbval suite (solutions)", notebooks, seconds, outcome)


def run_grading(workspace: Path | None = None, sample: int | None = None) -> list[GradingRow]:
    """Every grading row: the demo cohort's autograde stages, then the nbval suite."""
    workspace = workspace or REPO_ROOT / "build" / "bench" / "grading-workspace"
    os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    return [*time_demo_autograde(workspace, sample=sample), time_nbval_suite()]


def format_grading_table(rows: list[GradingRow]) -> str:
    """The grading table: stage, notebooks graded, wall seconds and a note."""
    from autograder.checks.text_table import format_columns

    header = ["stage", "notebook files", "wall time", "note"]
    body = [
        [
            row.stage,
            str(row.notebooks) if row.notebooks else "-",
            "-" if row.seconds != row.seconds else f"{row.seconds:.1f} s",  # nan: not measured
            row.note,
        ]
        for row in rows
    ]
    return "\n".join(format_columns(header, body, right={1, 2}))
