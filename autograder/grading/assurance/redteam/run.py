"""Grading the red team: one autograde run with the honest students, the scan, the
rows and their table."""

import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.checks.text_table import format_columns
from autograder.grading.assurance.cohort import BLANK, BUGS, REFERENCE, build_submission
from autograder.grading.assurance.redteam.catalogue import CHEATS
from autograder.grading.assurance.redteam.cheat import (
    ASSIGNMENT,
    HONEST_BUG,
    SUBMISSION_TIMEOUT,
    Cheat,
    course_digests,
)
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.course.scores import Score, cell_scores
from autograder.grading.pipeline.autograde import (
    GradingRun,
    GradingSettings,
    autograde,
)
from autograder.grading.pipeline.autograde.job.sandbox import SANDBOXED
from autograder.grading.pipeline.grading_settings import DEFAULT_VERDICTS
from autograder.grading.pipeline.integrity import CHEATING_RULES, Flag, scan_assignment

HONEST = (REFERENCE, BLANK, HONEST_BUG)
# Graded with the cheats of another notebook, each must get what it gets alone there.
HONEST_ELSEWHERE = (REFERENCE,)


def assignments_graded() -> list[str]:
    """The notebooks the red team hands in: 00-recipe first, then any a cheat needs."""
    return list(dict.fromkeys([ASSIGNMENT, *(cheat.assignment for cheat in CHEATS)]))


@dataclass
class RedTeamRow:
    """What grading made of one student of the red-team run."""

    student: str
    story: str
    status: str
    score: Score  # as graded
    zeroed: Score  # after zeroing flagged exercises
    flags: list[Flag]
    honest_points: float
    expected_flags: frozenset[str]
    expected_status: str
    defence: str = "scan"
    harm: str = ""  # lasting harm found after the run

    @property
    def flagged_rules(self) -> set[str]:
        return {flag.rule for flag in self.flags}

    @property
    def verdict(self) -> str:
        """Empty when the cheat was contained, else what went wrong."""
        problems = []
        if self.status not in self.expected_status.split(" or "):
            problems.append(f"status {self.status}, expected {self.expected_status}")
        missing = self.expected_flags - self.flagged_rules
        if missing:
            problems.append(f"not flagged for {sorted(missing)}")
        cheating = self.flagged_rules & CHEATING_RULES
        if self.score.score > self.honest_points and not cheating:
            problems.append(f"{self.score} unflagged, honest work earns {self.honest_points:g}")
        if self.zeroed.score > self.honest_points:
            problems.append(f"keeps {self.zeroed} after zeroing")
        if self.harm:
            problems.append(self.harm)
        return "; ".join(problems)

    @property
    def outcome(self) -> str:
        """The table's last column: contained, or what went wrong."""
        return "yes" if not self.verdict else "NO: " + self.verdict


def write_submissions(submitted: Path, release_dir: Path) -> None:
    """Honest students and cheats, in nbgrader's submitted/ layout under ``submitted``."""
    handed_in = [(student, ASSIGNMENT, None) for student in HONEST]
    for assignment in assignments_graded()[1:]:
        handed_in += [(student, assignment, None) for student in HONEST_ELSEWHERE]
    handed_in += [(cheat.student, cheat.assignment, cheat) for cheat in CHEATS]
    for student, assignment, cheat in handed_in:
        base = cheat.base if cheat else student
        notebook = build_submission(base, assignment, SOLUTIONS_DIR, release_dir)
        if cheat:
            cheat.edit(notebook)
        target = notebook_path(submitted / student, assignment)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)


@dataclass
class RedTeamResult:
    """The red-team run: each cheat's row, the honest students' grades, every flag."""

    root: Path
    run: GradingRun
    cheats: list[RedTeamRow]
    honest_cells: dict[str, dict[str, Score]]  # student -> test cell -> score (00-recipe)
    flags: list[Flag]
    # (student, notebook) -> test cell -> score, for HONEST_ELSEWHERE in the other notebooks
    honest_elsewhere: dict[tuple[str, str], dict[str, Score]] = field(default_factory=dict)

    def honest_problems(self) -> list[str]:
        """How the honest students' grades or flags differ from grading them alone."""
        problems = []
        for (student, assignment), cells in self.honest_elsewhere.items():
            lost = sorted(cell for cell, s in cells.items() if s.score < s.max_score)
            if lost or not cells:
                problems.append(f"{student} lost {lost or 'everything'} in {assignment}")
        for student, cells in self.honest_cells.items():
            lost = {cell for cell, s in cells.items() if s.score < s.max_score}
            expected = set(cells) if student == BLANK else honest_losses()[student]
            if lost != expected:
                problems.append(f"{student} lost {sorted(lost)}, expected {sorted(expected)}")
            flagged = [f for f in self.flags if f.student == student]
            if flagged:
                problems.append(f"{student} flagged: {flagged}")
        return problems


def honest_losses() -> dict[str, set[str]]:
    """Test cells each honest student loses when graded alone: none, or the bug's."""
    bug = next(b for b in BUGS if b.student == HONEST_BUG)
    return {REFERENCE: set(), HONEST_BUG: set(bug.loses)}


def run_red_team(
    root: Path,
    workers: int = 2,
    cell_timeout: int = 20,
    memory_limit_mb: int = 3072,
    verdicts: str = DEFAULT_VERDICTS,
) -> RedTeamResult:
    """Grade the honest students and every cheat in one run; scan, zero and tabulate
    (``verdicts="kernel"``: nbgrader's way, to see what the trusted kernel stops)."""
    graded_assignments = assignments_graded()
    course = generate_release(root.resolve(), graded_assignments)
    root = course.root
    write_submissions(course.submitted, course.release)
    before = course_digests(root)
    settings = GradingSettings(
        workers=workers,
        cell_timeout=cell_timeout,
        memory_limit_mb=memory_limit_mb,
        submission_timeout=SUBMISSION_TIMEOUT,
        progress=False,
        verdicts=verdicts,
    )
    runs = autograde(course, graded_assignments, settings)
    run = GradingRun(
        "+".join(graded_assignments),
        [record for one in runs for record in one.records],
        sum(one.wall_seconds for one in runs),
    )
    harms = {c.student: c.harm(root, before) for c in CHEATS if c.harm is not None}
    db_url = course.db_url
    graded = {c.student: total(db_url, c.student, c.assignment) for c in CHEATS}
    # The scan as run by a course with c.CourseIntegrity.zero_flagged_exercises = True.
    flags = []
    for assignment in graded_assignments:
        flags += scan_assignment(course, assignment, zero=True)[0]
    statuses = {
        record.student: record.status
        for record in run.records
        if record.assignment == ASSIGNMENT
        or any(c.student == record.student and c.assignment == record.assignment for c in CHEATS)
    }
    sandboxed = {r.student for r in run.records if r.sandbox == SANDBOXED}

    def expected(cheat: Cheat) -> tuple[str, frozenset[str]]:
        if cheat.sandboxed and cheat.student in sandboxed:
            return cheat.sandboxed
        return cheat.status, cheat.flags

    rows = [
        RedTeamRow(
            student=cheat.student,
            story=cheat.story,
            status=statuses.get(cheat.student, "missing"),
            score=graded[cheat.student],
            zeroed=total(db_url, cheat.student, cheat.assignment),
            flags=[f for f in flags if f.student == cheat.student],
            honest_points=cheat.honest_points,
            expected_flags=expected(cheat)[1],
            expected_status=expected(cheat)[0],
            defence=cheat.defence,
            harm=harms.get(cheat.student, ""),
        )
        for cheat in CHEATS
    ]
    honest = {student: cell_scores(db_url, student, ASSIGNMENT) for student in HONEST}
    elsewhere = {
        (student, assignment): cell_scores(db_url, student, assignment)
        for assignment in graded_assignments[1:]
        for student in HONEST_ELSEWHERE
    }
    return RedTeamResult(root, run, rows, honest, flags, elsewhere)


def total(db_url: str, student: str, assignment: str = ASSIGNMENT) -> Score:
    """A student's score on ``assignment``, summed over its test cells."""
    return Score.total(cell_scores(db_url, student, assignment).values())


def format_red_team(result: RedTeamResult) -> str:
    """The red-team table: each cheat's score before and after zeroing, its flags, verdict."""
    header = ["student", "status", "score", "after zeroing", "flagged", "defence", "contained"]
    rows = []
    for row in result.cheats:
        flagged = ", ".join(sorted(row.flagged_rules)) or "no"
        rows.append(
            [
                row.student,
                row.status,
                str(row.score),
                str(row.zeroed),
                flagged,
                row.defence,
                row.outcome,
            ]
        )
    statuses = {record.student: record.status for record in result.run.records}
    problems = result.honest_problems()
    for student, cells in result.honest_cells.items():
        score = Score.total(cells.values())
        unchanged = "NO" if any(p.startswith(student) for p in problems) else "unchanged"
        status = statuses.get(student, "missing")
        rows.append([student, status, str(score), str(score), "no", "honest", unchanged])
    text = format_columns(header, rows)
    text.append("")
    text.extend(f"  {row.student}: {row.story}" for row in result.cheats)
    text.append(f"  {', '.join(HONEST)}: honest students graded in the same run")
    return "\n".join(text)


def main(workspace: Path) -> int:
    """Run the red team and print its table; exit status 1 if a cheat was not contained."""
    started = time.perf_counter()
    result = run_red_team(workspace)
    print(format_red_team(result))
    print(
        f"\ngraded {len(result.run.records)} submissions of {ASSIGNMENT} in "
        f"{time.perf_counter() - started:.0f} s; workspace: {result.root}"
    )
    failed = [row for row in result.cheats if row.verdict]
    contained = not failed and not result.honest_problems()
    return 0 if contained else 1
