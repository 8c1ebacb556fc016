"""The main job: regenerate the release, grade the demo cohort with nbgrader, print grades.

Expected outcome, checked and printed per student: the reference solution gets full marks,
the blank release gets 0, and each planted bug loses points exactly on the test cells its
bug touches (and nowhere else, in particular not in other notebooks).
"""

import time
from dataclasses import dataclass
from pathlib import Path

from autograder.checks.text_table import format_columns
from autograder.grading.cohort import BLANK, BUGS, REFERENCE, submitted_assignments, write_cohort
from autograder.grading.course_root import load_course
from autograder.grading.integrity import Flag, scan_assignment
from autograder.grading.nbgrader_workspace import run_nbgrader
from autograder.grading.release import generate_release, publish_release
from autograder.grading.repo_paths import REPO_ROOT, SOLUTIONS_DIR, assignments
from autograder.grading.report.gather import write_report
from autograder.grading.scores import Score, cell_scores, read_export

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


def run_demo(workspace: Path = DEFAULT_WORKSPACE, publish: bool = True) -> DemoResult:
    """Release, autograde and export with the real nbgrader; compare with expectations."""
    workspace = workspace.resolve()
    ids = assignments()
    release_dir = generate_release(workspace, ids)
    if publish:
        publish_release(release_dir)
    course = load_course(workspace)
    cohort = write_cohort(course.submitted, SOLUTIONS_DIR, release_dir)
    for assignment in ids:
        run_nbgrader(course.workdir, "autograde", assignment, "--force")
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
    )


def format_demo_table(result: DemoResult) -> str:
    """Students by notebook, with totals and whether each row is as expected."""
    stories = {bug.student: bug.story for bug in BUGS}
    stories[REFERENCE] = "the solutions, typed in"
    stories[BLANK] = "the release as given"
    header = ["student", *result.assignments, "total", "as expected"]
    rows = []
    for student in result.students:
        handed_in = [a for a in result.assignments if (student, a) in result.cell_scores]
        scores = {a: result.notebook_scores[(student, a)] for a in handed_in}
        total = Score.total(scores.values())
        check = "yes" if not result.verdicts[student] else "NO: " + result.verdicts[student]
        cells = [str(scores[a]) if a in scores else "-" for a in result.assignments]
        rows.append([student, *cells, str(total), check])
    lines = format_columns(header, rows)
    lines.append("")
    lines.extend(f"  {student}: {stories[student]}" for student in result.students)
    lines.append("  -: not handed in (a planted student hands in only the notebook with the bug)")
    return "\n".join(lines)


def main(workspace: Path = DEFAULT_WORKSPACE) -> int:
    """Run the demo and print the grade table; exit status 1 if grades are not as expected."""
    started = time.perf_counter()
    result = run_demo(workspace)
    print(format_demo_table(result))
    print(
        f"\ngraded {len(result.cell_scores)} submissions ({len(result.students)} students, "
        f"{len(result.assignments)} notebooks) with nbgrader in "
        f"{time.perf_counter() - started:.0f} s; workspace: {workspace}"
    )
    print(f"integrity scan: {len(result.flags)} flags (an honest cohort should have none)")
    for flag in result.flags:
        print(
            f"  {flag.student} {flag.assignment} {flag.cell}:{flag.line} {flag.rule}: {flag.detail}"
        )
    print(f"grading reports: {result.reports[0].parent.parent}/<assignment>/report.html")
    return 0 if result.as_expected and not result.flags else 1
