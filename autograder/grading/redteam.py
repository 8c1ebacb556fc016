"""The red team: cheating submissions graded in one run with honest ones.

Each cheat is a real notebook a student could hand in for 00-recipe (the quickest notebook
to grade): the blank release or the reference solution with a cheat planted in it. One
``autograde`` run grades them together with honest students; the integrity scan runs next
to it, outside the kernels. A cheat passes the red team when it earns no more than its
honest work deserves, or when the scan flags it (and zeroing then takes the points away);
crashes and hangs must end with the expected status and leave the others untouched.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade

from autograder.checks.text_table import format_columns
from autograder.grading.autograde import GradingRun, autograde, load_course
from autograder.grading.cohort import BLANK, BUGS, REFERENCE, build_submission, plant_edit
from autograder.grading.integrity import CHEATING_RULES, Flag, scan_assignment
from autograder.grading.nbgrader_workspace import create_workspace
from autograder.grading.release import generate_release
from autograder.grading.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.scores import Score, cell_scores

ASSIGNMENT = "00-recipe"
HONEST_BUG = "bug-power-rule"  # an honest student with a real mistake, graded alongside


def in_cell(grade_id: str, before: str, after: str) -> Callable[[nbformat.NotebookNode], None]:
    """An edit that replaces ``before`` (or, when empty, appends ``after``) in one cell."""

    def edit(notebook: nbformat.NotebookNode) -> None:
        cell = next(
            c for c in notebook.cells if grade_id == c.metadata.get("nbgrader", {}).get("grade_id")
        )
        cell.source = plant_edit(cell.source, before, after, f"red team, cell {grade_id!r}")

    return edit


def tamper_with_tests(notebook: nbformat.NotebookNode) -> None:
    """Empty every test cell but one, and delete that one."""
    tests = [c for c in notebook.cells if is_grade(c)]
    for cell in tests[:-1]:
        cell.source = "pass  # tests? what tests?"
    notebook.cells.remove(tests[-1])


@dataclass(frozen=True)
class Cheat:
    """One cheating submission and what grading must make of it."""

    student: str
    story: str
    base: str  # REFERENCE or BLANK: the honest work under the cheat
    edit: Callable[[nbformat.NotebookNode], None]
    honest_points: float  # what the honest work alone earns
    flags: frozenset[str] = frozenset()  # rules the scan must raise
    status: str = "graded"  # how grading must end


POW_SOLVED = "derivative = exponent * self.data ** (exponent - 1)"

CHEATS: tuple[Cheat, ...] = (
    Cheat(
        "cheat-patch-checks",
        "rebinds check_parity and check_flags to functions that accept anything",
        BLANK,
        in_cell("scalar", "", "check_parity = check_flags = lambda *args, **kwargs: None"),
        honest_points=0,
        flags=frozenset({"monkeypatch"}),
    ),
    Cheat(
        "cheat-patch-numpy",
        "makes np.allclose and np.testing.assert_allclose always agree",
        BLANK,
        in_cell(
            "scalar",
            "",
            "np.allclose = lambda *args, **kwargs: True\n"
            "np.testing.assert_allclose = lambda *args, **kwargs: None",
        ),
        honest_points=0,
        flags=frozenset({"monkeypatch"}),
    ),
    Cheat(
        "cheat-torch-inside-engine",
        "the power rule's derivative computed by torch.autograd inside the NumPy engine",
        REFERENCE,
        in_cell(
            "scalar",
            POW_SOLVED,
            "import torch\n"
            "        base = torch.tensor(self.data, dtype=torch.float64, requires_grad=True)\n"
            "        derivative = torch.autograd.grad(base**exponent, base)[0].item()",
        ),
        honest_points=2,  # test_no_grad: the rest of its engine is the reference's
        flags=frozenset({"autograd-import"}),
    ),
    Cheat(
        "cheat-hard-coded-answers",
        "the power rule as a table of the visible tests' answers",
        REFERENCE,
        in_cell(
            "scalar",
            POW_SOLVED,
            "derivative = {(1.5, 3): 6.75, (2.0, 2): 4.0, (-1.5, 2): -3.0}[(self.data, exponent)]",
        ),
        honest_points=2,  # the hidden tests' fresh draws are not in the table
    ),
    Cheat(
        "cheat-edit-locked-tests",
        "empties the test cells and deletes one",
        BLANK,
        tamper_with_tests,
        honest_points=0,
        flags=frozenset({"locked-cell-edited"}),
    ),
    Cheat(
        "cheat-read-source-notebook",
        "searches the disk for the instructor's notebook and runs its solution cells",
        BLANK,
        in_cell(
            "scalar",
            "",
            "import json, pathlib\n"
            "for folder in pathlib.Path.cwd().parents:\n"
            "    source = folder / 'source' / '00-recipe' / '00-recipe.ipynb'\n"
            "    if source.exists():\n"
            "        for cell in json.loads(source.read_text())['cells']:\n"
            "            if cell['metadata'].get('nbgrader', {}).get('solution'):\n"
            "                exec(''.join(cell['source']))",
        ),
        honest_points=0,
        flags=frozenset({"file-access", "dynamic-code"}),
    ),
    Cheat(
        "cheat-read-gradebook",
        "opens the gradebook to look at other students' grades",
        BLANK,
        in_cell(
            "scalar",
            "",
            "import sqlite3\n"
            "sqlite3.connect('../../../gradebook.db').execute('select * from grade')",
        ),
        honest_points=0,
        flags=frozenset({"file-access"}),
    ),
    Cheat(
        "cheat-infinite-loop",
        "an exercise cell that never returns",
        BLANK,
        in_cell("scalar", "", "while True:\n    pass"),
        honest_points=0,
        status="timeout",
    ),
    Cheat(
        "cheat-memory-bomb",
        "an exercise cell that allocates memory until something gives",
        BLANK,
        in_cell("scalar", "", "hoard = []\nwhile True:\n    hoard.append(bytearray(10**8))"),
        honest_points=0,
        status="memory",
    ),
    Cheat(
        "cheat-kernel-exit",
        "kills its own kernel with os._exit",
        BLANK,
        in_cell("scalar", "", "import os\nos._exit(1)"),
        honest_points=0,
        status="kernel-died",
    ),
)

HONEST = (REFERENCE, BLANK, HONEST_BUG)


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

    @property
    def flagged_rules(self) -> set[str]:
        return {flag.rule for flag in self.flags}

    @property
    def verdict(self) -> str:
        """Empty when the cheat was contained, else what went wrong."""
        problems = []
        if self.status != self.expected_status:
            problems.append(f"status {self.status}, expected {self.expected_status}")
        missing = self.expected_flags - self.flagged_rules
        if missing:
            problems.append(f"not flagged for {sorted(missing)}")
        cheating = self.flagged_rules & CHEATING_RULES
        if self.score.score > self.honest_points and not cheating:
            problems.append(f"{self.score} unflagged, honest work earns {self.honest_points:g}")
        if self.zeroed.score > self.honest_points:
            problems.append(f"keeps {self.zeroed} after zeroing")
        return "; ".join(problems)


def write_submissions(submitted: Path, release_dir: Path) -> None:
    """Honest students and cheats, in nbgrader's submitted/ layout under ``submitted``."""
    for student in (*HONEST, *(cheat.student for cheat in CHEATS)):
        cheat = next((c for c in CHEATS if c.student == student), None)
        base = cheat.base if cheat else student
        notebook = build_submission(base, ASSIGNMENT, SOLUTIONS_DIR, release_dir)
        if cheat:
            cheat.edit(notebook)
        target = notebook_path(submitted / student, ASSIGNMENT)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)


@dataclass
class RedTeamResult:
    """The red-team run: each cheat's row, the honest students' grades, every flag."""

    root: Path
    run: GradingRun
    cheats: list[RedTeamRow]
    honest_cells: dict[str, dict[str, Score]]  # student -> test cell -> score
    flags: list[Flag]

    def honest_problems(self) -> list[str]:
        """How the honest students' grades or flags differ from grading them alone."""
        problems = []
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
    root: Path, workers: int = 2, cell_timeout: int = 20, memory_limit_mb: int = 3072
) -> RedTeamResult:
    """Grade the honest students and every cheat in one run; scan, zero and tabulate."""
    root = create_workspace(root.resolve())
    release_dir = generate_release(root, [ASSIGNMENT])
    course = load_course(root)
    write_submissions(course.submitted, release_dir)
    run = autograde(
        root,
        ASSIGNMENT,
        workers=workers,
        cell_timeout=cell_timeout,
        memory_limit_mb=memory_limit_mb,
        progress=False,
    )
    db_url = course.db_url
    graded = {cheat.student: total(db_url, cheat.student) for cheat in CHEATS}
    # The scan as run by a course with c.CourseIntegrity.zero_flagged_exercises = True.
    flags, _ = scan_assignment(course, ASSIGNMENT, zero=True)
    statuses = {record.student: record.status for record in run.records}
    rows = [
        RedTeamRow(
            student=cheat.student,
            story=cheat.story,
            status=statuses.get(cheat.student, "missing"),
            score=graded[cheat.student],
            zeroed=total(db_url, cheat.student),
            flags=[f for f in flags if f.student == cheat.student],
            honest_points=cheat.honest_points,
            expected_flags=cheat.flags,
            expected_status=cheat.status,
        )
        for cheat in CHEATS
    ]
    honest = {student: cell_scores(db_url, student, ASSIGNMENT) for student in HONEST}
    return RedTeamResult(root, run, rows, honest, flags)


def total(db_url: str, student: str) -> Score:
    """A student's score on the assignment, summed over its test cells."""
    return Score.total(cell_scores(db_url, student, ASSIGNMENT).values())


def format_red_team(result: RedTeamResult) -> str:
    """The red-team table: each cheat's score before and after zeroing, its flags, verdict."""
    header = ["student", "status", "score", "after zeroing", "flagged", "contained"]
    rows = []
    for row in result.cheats:
        flagged = ", ".join(sorted(row.flagged_rules)) or "no"
        contained = "yes" if not row.verdict else "NO: " + row.verdict
        rows.append([row.student, row.status, str(row.score), str(row.zeroed), flagged, contained])
    statuses = {record.student: record.status for record in result.run.records}
    problems = result.honest_problems()
    for student, cells in result.honest_cells.items():
        score = Score.total(cells.values())
        unchanged = "NO" if any(p.startswith(student) for p in problems) else "unchanged"
        rows.append(
            [student, statuses.get(student, "missing"), str(score), str(score), "no", unchanged]
        )
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
    contained = not any(row.verdict for row in result.cheats) and not result.honest_problems()
    return 0 if contained else 1
