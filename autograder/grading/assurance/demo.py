"""The main job: regenerate the release, grade the demo cohort through the project's own
autograde (parallel workers, the sandbox, trusted verdicts), print grades and the report.

Expected outcome, checked and printed per student: the reference solution gets full marks,
the blank release gets 0, and each planted bug loses points exactly on the test cells its
bug touches (and nowhere else, in particular not in other notebooks).
"""

import os
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder.checks.text_table import format_columns
from autograder.grading.assurance.cohort import (
    BLANK,
    BUGS,
    REFERENCE,
    submitted_assignments,
    write_cohort,
)
from autograder.grading.authoring.release import generate_release, publish_release
from autograder.grading.course.nbgrader_workspace import run_nbgrader
from autograder.grading.course.repo_paths import REPO_ROOT, SOLUTIONS_DIR, assignments
from autograder.grading.course.run_progress import clock_text, print_to_stderr
from autograder.grading.course.scores import Score, cell_scores, read_export
from autograder.grading.pipeline.autograde.job.sandbox import (
    NOT_SANDBOXED,
    SANDBOXED,
    unavailable_reason,
)
from autograder.grading.pipeline.integrity import Flag, scan_assignment
from autograder.grading.pipeline.report.gather import write_report

DEFAULT_WORKSPACE = REPO_ROOT / "build" / "demo"


@dataclass
class DemoResult:
    """What the demo graded: notebook scores, per-cell scores and the verdict per student."""

    workspace: Path
    assignments: list[str]
    students: list[str]
    notebook_scores: dict[tuple[str, str], Score]
    cell_scores: dict[tuple[str, str], dict[str, Score]]
    verdicts: dict[str, str]  # student -> "" when as expected, else what went wrong
    flags: list[Flag]  # the integrity scan's: an honest cohort has none
    reports: list[Path]  # one HTML grading report per assignment
    sandbox: str = ""  # how the kernels ran: "bubblewrap", or "not sandboxed (why)"
    workers: int = 1

    @property
    def as_expected(self) -> bool:
        return not any(self.verdicts.values())


def expected_losses(student: str) -> dict[str, frozenset[str]]:
    """assignment -> test cells this student should lose points on (none where absent)."""
    return {bug.assignment: bug.loses for bug in BUGS if bug.student == student}


def verdict(student: str, cells: dict[tuple[str, str], dict[str, Score]]) -> str:
    """Empty when the student's grades are what the cohort says, else the differences."""
    problems = []
    expected = expected_losses(student)
    for (name, assignment), grades in cells.items():
        if name != student:
            continue
        if student == BLANK:
            earned = {cell for cell, s in grades.items() if s.score > 0}
            if earned:
                problems.append(f"{assignment}: blank release earned points on {sorted(earned)}")
            continue
        lost = {cell for cell, s in grades.items() if s.score < s.max_score}
        should_lose = expected.get(assignment, frozenset())
        if lost != should_lose:
            problems.append(
                f"{assignment}: lost points on {sorted(lost)}, expected {sorted(should_lose)}"
            )
    return "; ".join(problems)


def _silent(line: str) -> None:
    """No progress output (the default when the demo runs inside the test suite)."""


def run_demo(
    workspace: Path = DEFAULT_WORKSPACE,
    publish: bool = True,
    report: Callable[[str], None] = _silent,
    workers: int | None = None,
) -> DemoResult:
    """Release with the real nbgrader, grade with ``autograde`` (``workers`` processes, one
    per core by default), export; compare with expectations.

    ``report`` receives a line as each stage starts and ends (per notebook while grading,
    with the elapsed time and an estimate of the time left).
    """
    from autograder.grading.pipeline.autograde import GradingSettings, autograde

    started = time.perf_counter()
    workspace = workspace.resolve()
    workers = workers or os.cpu_count() or 1
    ids = assignments()
    report(f"release: nbgrader generate_assignment of {len(ids)} notebooks")
    course = generate_release(workspace, ids, report)
    if publish:
        publish_release(course.release)
    cohort = write_cohort(course.submitted, SOLUTIONS_DIR, course.release)
    handed_in = sum(len(submitted_assignments(s, ids)) for s in cohort)
    report(
        f"grading: autograde of {handed_in} submissions, {workers} workers "
        f"(elapsed {clock_text(time.perf_counter() - started)})"
    )
    # One cluster for every notebook; its own progress line per notebook when reporting.
    # The demo's students are the course's own: where no sandbox can run it grades
    # unsandboxed (a real cohort is refused), and says why.
    cannot_sandbox = unavailable_reason()
    settings = GradingSettings(
        workers=workers, progress=report is not _silent, sandbox=cannot_sandbox is None
    )
    runs = autograde(course, ids, settings)
    sandboxes = {record.sandbox for run in runs for record in run.records}
    if cannot_sandbox is not None:
        sandboxes = {f"{NOT_SANDBOXED} ({cannot_sandbox})"}
    report("export, integrity scan and grading reports ...")
    run_nbgrader(course.workdir, "export", "--to", str(workspace / "grades.csv"))
    flags = [flag for assignment in ids for flag in scan_assignment(course, assignment)[0]]
    cells = {
        (s, a): cell_scores(course.db_url, s, a)
        for s in cohort
        for a in submitted_assignments(s, ids)
    }
    return DemoResult(
        workspace=workspace,
        assignments=ids,
        students=cohort,
        notebook_scores=read_export(workspace / "grades.csv"),
        cell_scores=cells,
        verdicts={s: verdict(s, cells) for s in cohort},
        flags=flags,
        reports=write_report(course, ids, workspace / "report"),
        sandbox=", ".join(sorted(sandboxes)),
        workers=workers,
    )


TABLE_WIDTH = 100


def short_names(names: list[str]) -> dict[str, str]:
    """Column heads for assignments: the number before the first dash, where that is unique."""
    heads = {name: name.split("-", 1)[0] for name in names}
    if len(set(heads.values())) < len(heads):
        return {name: name for name in names}
    return heads


def wrapped(text: str, indent: str = "  ") -> list[str]:
    """One note under the table, wrapped to the table's width."""
    return textwrap.wrap(
        text, TABLE_WIDTH, initial_indent=indent, subsequent_indent=indent + "    "
    )


def format_demo_table(result: DemoResult) -> str:
    """One row per student: points per notebook (short heads, legend below), total, verdict.

    Fits in TABLE_WIDTH columns: points possible are a row of their own, and a verdict's
    details and the students' stories are wrapped below the table.
    """
    stories = {bug.student: bug.story for bug in BUGS}
    stories[REFERENCE] = "the solutions, typed in"
    stories[BLANK] = "the release as given"
    heads = short_names(result.assignments)
    possible = {}
    for (_, assignment), score in result.notebook_scores.items():
        possible.setdefault(assignment, score.max_score)
    header = ["student", *(heads[a] for a in result.assignments), "total", "ok"]
    rows = [
        [
            "(points possible)",
            *(f"{possible[a]:g}" if a in possible else "-" for a in result.assignments),
            f"{sum(possible.values()):g}",
            "",
        ]
    ]
    for student in result.students:
        handed_in = [a for a in result.assignments if (student, a) in result.cell_scores]
        scores = {a: result.notebook_scores[(student, a)] for a in handed_in}
        total = Score.total(scores.values())
        check = "yes" if not result.verdicts[student] else "NO"
        cells = [f"{scores[a].score:g}" if a in scores else "-" for a in result.assignments]
        rows.append([student, *cells, f"{total.score:g}", check])
    lines = format_columns(header, rows)
    lines.append("")
    lines.extend(wrapped(", ".join(f"{heads[a]}: {a}" for a in result.assignments)))
    lines.append("  points earned per notebook; -: not handed in (a planted student hands in")
    lines.append("  only the notebook with the bug); ok: grades as the cohort predicts")
    lines.append("")
    for student in result.students:
        lines.extend(wrapped(f"{student}: {stories[student]}"))
    problems = [(s, v) for s, v in result.verdicts.items() if v]
    if problems:
        lines.append("")
        lines.append("not as expected:")
        for student, problem in problems:
            lines.extend(wrapped(f"{student}: {problem}"))
    return "\n".join(lines)


def sandbox_line(label: str) -> str:
    """Whether the demo's kernels ran in the sandbox, in words."""
    if label == SANDBOXED:
        return "on (bubblewrap): student code ran with no network and only its job's files"
    return f"OFF: {label or 'nothing graded'}"


def main(workspace: Path = DEFAULT_WORKSPACE) -> int:
    """Run the demo and print the grade table; exit status 1 if grades are not as expected."""
    started = time.perf_counter()
    result = run_demo(workspace, report=print_to_stderr)
    print(format_demo_table(result))
    print(
        f"\ngraded {len(result.cell_scores)} submissions ({len(result.students)} students, "
        f"{len(result.assignments)} notebooks) with autograde ({result.workers} workers, "
        f"trusted verdicts) in {time.perf_counter() - started:.0f} s; workspace: {workspace}"
    )
    print(f"sandbox: {sandbox_line(result.sandbox)}")
    print(f"integrity scan: {len(result.flags)} flags (an honest cohort should have none)")
    for flag in result.flags:
        print(
            f"  {flag.student} {flag.assignment} {flag.cell}:{flag.line} {flag.rule}: {flag.detail}"
        )
    print(f"grading reports: {result.reports[0].parent.parent}/<assignment>/report.html")
    return 0 if result.as_expected and not result.flags else 1
