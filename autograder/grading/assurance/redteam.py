"""The red team: cheating submissions graded in one run with honest ones.

Each cheat is a real notebook a student could hand in for 00-recipe (the quickest notebook
to grade), or for another notebook when it needs what only that one has (02-how-it-works:
checks that lend the reference's other exercises): the blank release or the reference
solution with a cheat planted in it. One ``autograde`` run per notebook grades them
together with honest students; the integrity scan runs next to it, outside the kernels. A
cheat passes the red team when it earns no more than its honest work deserves, or when the
scan flags it (and zeroing then takes the points away); crashes and hangs must end with the
expected status and leave the others untouched, and no cheat may leave lasting harm (a
changed course file, a process still running).

Each cheat names the defence that stops it (one of ``DEFENCES``), shown in its row.
"""

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade

from autograder.checks.text_table import format_columns
from autograder.grading.assurance import redteam_cheats as code
from autograder.grading.assurance.cohort import BLANK, BUGS, REFERENCE, build_submission, plant_edit
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.nbgrader_workspace import create_workspace
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.course.scores import Score, cell_scores
from autograder.grading.pipeline.autograde import (
    GradingRun,
    GradingSettings,
    autograde_assignments,
    load_course,
)
from autograder.grading.pipeline.autograde.run import DEFAULT_VERDICTS
from autograder.grading.pipeline.autograde.sandbox import SANDBOXED
from autograder.grading.pipeline.integrity import CHEATING_RULES, Flag, scan_assignment

ASSIGNMENT = "00-recipe"
LENDING = "02-how-it-works"  # its checks lend the reference's other exercises
HONEST_BUG = "bug-power-rule"  # an honest student with a real mistake, graded alongside

# What stops a cheat: "scan" (the integrity scan, then zeroing), "audit" (the runtime
# record, then zeroing), "limits" (time, memory and process limits of the grading),
# "checks" (nbgrader's restored cells and the check library's own strictness), "sandbox"
# (the kernel sees no file or process of the course, no autograd library and no reference
# engine) and "trusted" (verdicts decided outside the student's kernel). All are here; a
# cheat whose defence were missing would be reported as waiting for it.
DEFENCES = ("scan", "audit", "limits", "checks", "sandbox", "trusted")
SUBMISSION_TIMEOUT = 150  # seconds: a worker stopped by its kernel is killed after this
# A detached process a cheat leaves running is `sleep` of this many seconds, to find it.
DETACHED_SECONDS = f"{random.randint(10**6, 10**7)}.25"


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
    defence: str = "scan"  # one of DEFENCES: what stops this cheat
    # What lasting harm it did, from the course before the run ("" for none).
    harm: Callable[[Path, dict[str, str]], str] | None = None
    # (status, flags) when the kernel ran in the sandbox, where what the cheat attempts
    # cannot happen (nothing to find, no grader to signal); None: the same as unsandboxed.
    sandboxed: tuple[str, frozenset[str]] | None = None
    assignment: str = ASSIGNMENT  # the notebook it is handed in for


POW_SOLVED = "derivative = exponent * self.data ** (exponent - 1)"

FIRST_CHEATS: tuple[Cheat, ...] = (
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
        defence="checks",
    ),
    Cheat(
        "cheat-edit-locked-tests",
        "empties the test cells and deletes one",
        BLANK,
        tamper_with_tests,
        honest_points=0,
        flags=frozenset({"locked-cell-edited"}),
        defence="checks",
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
        defence="limits",
    ),
    Cheat(
        "cheat-memory-bomb",
        "an exercise cell that allocates memory until something gives",
        BLANK,
        in_cell("scalar", "", "hoard = []\nwhile True:\n    hoard.append(bytearray(10**8))"),
        honest_points=0,
        # On a loaded machine the cell timeout can come before the memory limit.
        status="memory or timeout",
        defence="limits",
    ),
    Cheat(
        "cheat-kernel-exit",
        "kills its own kernel with os._exit",
        BLANK,
        in_cell("scalar", "", "import os\nos._exit(1)"),
        honest_points=0,
        status="kernel-died",
        defence="limits",
    ),
)


def wrong_power_rule() -> Callable[[nbformat.NotebookNode], None]:
    """The reference with a wrong power rule: test_no_grad passes, 2 points honestly."""
    return in_cell("scalar", POW_SOLVED, "derivative = 0.0")


def with_wrong_power_rule(cheat_cell: str, source: str) -> Callable:
    """A wrong power rule, and ``source`` appended to ``cheat_cell``."""

    def edit(notebook: nbformat.NotebookNode) -> None:
        wrong_power_rule()(notebook)
        in_cell(cheat_cell, "", source)(notebook)

    return edit


def file_changed(relative: str) -> Callable[[Path, dict[str, str]], str]:
    """Harm: the course file ``relative`` (under the course root) is not as it was."""

    def harm(root: Path, before: dict[str, str]) -> str:
        if file_digest(root / relative) != before.get(relative):
            return f"{relative} was changed"
        return ""

    return harm


def detached_alive(root: Path, before: dict[str, str]) -> str:
    """Harm: the cheat's detached process is still running after the run."""
    import psutil

    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["cmdline"] == ["sleep", DETACHED_SECONDS]:
            if process.info["status"] != psutil.STATUS_ZOMBIE:
                process.kill()
                return f"its detached process {process.pid} outlived the run"
    return ""


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def course_digests(root: Path) -> dict[str, str]:
    """The course files a cheat could harm: its config and every submitted file."""
    paths = [root / "nbgrader_config.py", *(root / "submitted").rglob("*")]
    return {str(p.relative_to(root)): file_digest(p) for p in paths if p.is_file()}


VICTIM = f"submitted/{HONEST_BUG}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"

TORCH_CHEATS = tuple(
    Cheat(
        student,
        f"the power rule by torch, reached through {story}",
        REFERENCE,
        in_cell("scalar", POW_SOLVED, code.torch_by(route)),
        honest_points=2,
        defence=defence,
        flags=flags,
    )
    for (student, (story, route)), defence, flags in zip(
        code.TORCH_ROUTES.items(),
        ("scan", "trusted", "trusted", "trusted", "audit", "audit"),
        (
            frozenset(),
            frozenset(),
            frozenset(),
            frozenset(),
            frozenset({"runtime-code"}),
            frozenset({"runtime-code"}),
        ),
        strict=True,
    )
)

NEW_CHEATS: tuple[Cheat, ...] = (
    *TORCH_CHEATS,
    Cheat(
        "cheat-input-transformer",
        "an IPython input transformer turns every later check cell into `pass`",
        BLANK,
        in_cell("scalar", "", code.INPUT_TRANSFORMER),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-exception-handler",
        "a custom IPython exception handler silences every later failing check",
        BLANK,
        in_cell("scalar", "", code.EXCEPTION_HANDLER),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-trace-function",
        "a trace function replaces the checks in each later cell's globals as it starts",
        BLANK,
        in_cell("scalar", "", code.TRACE_FUNCTION),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-globals-checks",
        "replaces the checks through globals() under built names",
        BLANK,
        in_cell("scalar", "", code.GLOBALS_CHECKS),
        honest_points=0,
        defence="scan",
    ),
    Cheat(
        "cheat-main-module",
        "replaces the checks as attributes of __main__",
        BLANK,
        in_cell("scalar", "", code.MAIN_MODULE),
        honest_points=0,
        defence="scan",
    ),
    Cheat(
        "cheat-helper-code",
        "swaps the code of the comparison helper check_parity calls",
        REFERENCE,
        with_wrong_power_rule("scalar", code.HELPER_CODE),
        honest_points=2,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-check-defaults",
        "changes check_parity's keyword defaults (devices it cannot use)",
        REFERENCE,
        with_wrong_power_rule("scalar", code.CHECK_DEFAULTS),
        honest_points=2,
        defence="checks",
    ),
    Cheat(
        "cheat-tolerance-table",
        "widens the comparison's tolerance table to anything",
        REFERENCE,
        with_wrong_power_rule("scalar", code.TOLERANCE_TABLE),
        honest_points=2,
        defence="trusted",
    ),
    Cheat(
        "cheat-helper-swap",
        "replaces the comparison helper through the module's dict under a built name",
        REFERENCE,
        with_wrong_power_rule("scalar", code.HELPER_SWAP),
        honest_points=2,
        defence="scan",
    ),
    Cheat(
        "cheat-lying-flags",
        "an engine whose every value and flag compares equal to anything",
        BLANK,
        in_cell("no_grad", "", code.LYING_FLAGS),
        honest_points=0,
        defence="checks",
    ),
    Cheat(
        "cheat-lying-numbers",
        "numbers that claim to equal anything",
        BLANK,
        in_cell("no_grad", "", code.LYING_NUMBERS),
        honest_points=0,
        defence="checks",
    ),
    Cheat(
        "cheat-job-gradebook-trigger",
        "plants a trigger in the job's gradebook that gives every test full marks",
        BLANK,
        in_cell("scalar", "", code.JOB_GRADEBOOK_TRIGGER),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-file"}),
    ),
    Cheat(
        "cheat-copy-other-submission",
        "finds the course folder and runs another student's solution cells",
        BLANK,
        in_cell("scalar", "", code.COPY_OTHER_SUBMISSION),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-file", "runtime-code"}),
        sandboxed=("graded", frozenset()),
    ),
    Cheat(
        "cheat-read-hidden-tests",
        "reads the hidden tests from the notebook file being graded",
        REFERENCE,
        with_wrong_power_rule("scalar", code.READ_HIDDEN_TESTS),
        honest_points=2,
        defence="trusted",
    ),
    Cheat(
        "cheat-append-config",
        "appends to the course's nbgrader_config.py (turning zeroing off for later runs)",
        BLANK,
        in_cell("scalar", "", code.APPEND_CONFIG),
        honest_points=0,
        defence="sandbox",
        flags=frozenset({"runtime-file"}),
        harm=file_changed("nbgrader_config.py"),
    ),
    Cheat(
        "cheat-overwrite-other",
        f"blanks {HONEST_BUG}'s submitted notebook on the course's disk",
        BLANK,
        in_cell("scalar", "", code.OVERWRITE_OTHER),
        honest_points=0,
        defence="sandbox",
        flags=frozenset({"runtime-file"}),
        harm=file_changed(VICTIM),
        sandboxed=("graded", frozenset()),
    ),
    Cheat(
        "cheat-detached-process",
        "leaves a detached process (own session, double fork, no environment) running",
        BLANK,
        in_cell("scalar", "", code.DETACHED_PROCESS.format(seconds=DETACHED_SECONDS)),
        honest_points=0,
        defence="limits",
        flags=frozenset({"runtime-process"}),
        harm=detached_alive,
    ),
    Cheat(
        "cheat-stop-worker",
        "stops (SIGSTOP) the grading worker that runs its kernel",
        BLANK,
        in_cell("scalar", "", code.STOP_WORKER),
        honest_points=0,
        status="timeout",
        defence="limits",
        flags=frozenset({"runtime-process"}),
        sandboxed=("graded", frozenset({"runtime-process"})),
    ),
    Cheat(
        "cheat-kill-worker",
        "kills the grading worker that runs its kernel",
        BLANK,
        in_cell("scalar", "", code.KILL_WORKER),
        honest_points=0,
        status="kernel-died",
        defence="limits",
        flags=frozenset({"runtime-process"}),
        sandboxed=("graded", frozenset({"runtime-process"})),
    ),
)

# The reference engine reached by several routes: sandboxed, it is not there (nothing is
# gained); unsandboxed, each route is flagged and zeroing takes the points.
ENGINE_CHEATS: tuple[Cheat, ...] = tuple(
    Cheat(
        student,
        story,
        REFERENCE,
        with_wrong_power_rule("scalar", source),
        honest_points=2,
        defence="sandbox",
        flags=frozenset(flags),
        sandboxed=("graded", frozenset()),
    )
    for student, story, source, flags in (
        (
            "cheat-engine-import",
            "the reference engine's power rule, imported under a built name",
            code.ENGINE_IMPORT,
            {"dynamic-code"},
        ),
        (
            "cheat-engine-through-checks",
            "the reference's Scalar taken from the checks' borrowing module",
            code.ENGINE_THROUGH_CHECKS,
            {"autograd-import"},
        ),
        (
            "cheat-engine-source",
            "the reference power rule's source asked of the checks and run",
            code.ENGINE_SOURCE_THROUGH_CHECKS,
            {"autograd-import", "dynamic-code"},
        ),
        (
            "cheat-engine-files",
            "the reference engine's files read from the package's folder and run",
            code.ENGINE_FILE,
            {"dynamic-code", "file-access"},
        ),
        (
            "cheat-solutions-folder",
            "the instructor's notebook found next to the package and its solution run",
            code.SOLUTIONS_FOLDER,
            {"dynamic-code", "file-access"},
        ),
    )
)


def answering_with_lent(first_answer: str) -> Callable[[nbformat.NotebookNode], None]:
    """An edit of 02: its first exercise answered with ``first_answer`` (which keeps the
    parts its check lends), every other exercise with what was kept."""

    def edit(notebook: nbformat.NotebookNode) -> None:
        for grade_id, source in (
            ("function", first_answer),
            ("tensor", code.KEPT_TENSOR),
            ("graph_nodes", code.KEPT_GRAPH_NODE),
            ("backward", code.KEPT_RELEASE_GRAPH),
        ):
            in_cell(grade_id, "", source)(notebook)

    return edit


LENDING_CHEATS: tuple[Cheat, ...] = (
    Cheat(
        "cheat-keep-lent-parts",
        "keeps the reference's parts lent to its kernel for one check (02) and answers the "
        "other exercises with them",
        REFERENCE,
        answering_with_lent(code.KEEP_LENT),
        honest_points=1,  # its own next_functions; every other exercise is the kept one
        defence="trusted",
        assignment=LENDING,
    ),
    Cheat(
        "cheat-leave-lent-parts",
        "writes the reference's parts lent to a copy of its kernel (02) into symbolic links' "
        "targets in /tmp, and answers the other exercises with them",
        REFERENCE,
        answering_with_lent(code.LEAVE_LENT),
        honest_points=1,
        defence="trusted",
        assignment=LENDING,
        status="graded",
        sandboxed=("kernel-died", frozenset()),
    ),
)

# At the lending copy's last ways out (a process of its own, the stopped kernel's memory) and
# at the verdict channel itself.
CHANNEL_CHEATS: tuple[Cheat, ...] = (
    Cheat(
        "cheat-copy-process",
        "a process started by the copy of its kernel (02) waits until the copy is gone, then "
        "writes the lent parts into /tmp, and the other exercises answer with them",
        REFERENCE,
        answering_with_lent(code.LEAVE_LENT_LATER),
        honest_points=1,
        defence="trusted",
        assignment=LENDING,
        sandboxed=("kernel-died", frozenset()),
    ),
    Cheat(
        "cheat-copy-writes-kernel",
        "the copy of its kernel (02) writes the lent parts into the stopped kernel's memory "
        "with process_vm_writev, and the other exercises answer with them",
        REFERENCE,
        answering_with_lent(code.WRITE_INTO_KERNEL),
        honest_points=1,
        defence="trusted",
        assignment=LENDING,
    ),
    Cheat(
        "cheat-flood-frames",
        "every reply on the verdict channel announces and sends 8 arrays of 200 MiB",
        REFERENCE,
        with_wrong_power_rule("scalar", code.FLOOD_FRAMES),
        honest_points=2,
        defence="trusted",
    ),
    Cheat(
        "cheat-call-home",
        "in the middle of a check, calls the trusted side itself: to evaluate the power rule, "
        "or any callback by number",
        REFERENCE,
        with_wrong_power_rule("scalar", code.CALL_HOME),
        honest_points=2,
        defence="trusted",
    ),
)

CHEATS = (*FIRST_CHEATS, *NEW_CHEATS, *ENGINE_CHEATS, *LENDING_CHEATS, *CHANNEL_CHEATS)
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
    root = create_workspace(root.resolve())
    graded_assignments = assignments_graded()
    release_dir = generate_release(root, graded_assignments)
    course = load_course(root)
    write_submissions(course.submitted, release_dir)
    before = course_digests(root)
    settings = GradingSettings(
        workers=workers,
        cell_timeout=cell_timeout,
        memory_limit_mb=memory_limit_mb,
        submission_timeout=SUBMISSION_TIMEOUT,
        progress=False,
        verdicts=verdicts,
    )
    runs = autograde_assignments(root, graded_assignments, settings)
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
