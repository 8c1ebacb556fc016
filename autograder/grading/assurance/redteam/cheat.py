"""One cheat (``Cheat``), the edits cheats are planted with, and the checks of lasting
harm they are held to."""

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade

import autograder.grading.assurance.redteam.cheat_code as code
from autograder.grading.assurance.cohort import REFERENCE, plant_edit
from autograder.grading.course.grading_status import Status

ASSIGNMENT = "00-recipe"
LENDING = "02-how-it-works"  # its checks lend the reference's other exercises
HONEST_BUG = "bug-power-rule"  # an honest student with a real mistake, graded alongside

# What stops a cheat: "scan" (the integrity scan, then zeroing), "audit" (the runtime
# record, then zeroing), "limits" (time, memory and process limits of the grading),
# "checks" (nbgrader's restored cells and the check library's own strictness), "sandbox"
# (the kernel sees no file or process of the course, no autograd library and no reference
# engine) and "trusted" (verdicts decided outside the student's kernel). The cheats are
# grouped by defence, one module each (``by_scan`` ... ``by_trusted``).
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
    status: str = Status.GRADED  # how grading must end (or: "A or B")
    defence: str = "scan"  # one of DEFENCES: what stops this cheat
    # What lasting harm it did, from the course before the run ("" for none).
    harm: Callable[[Path, dict[str, str]], str] | None = None
    # (status, flags) when the kernel ran in the sandbox, where what the cheat attempts
    # cannot happen (nothing to find, no grader to signal); None: the same as unsandboxed.
    sandboxed: tuple[str, frozenset[str]] | None = None
    assignment: str = ASSIGNMENT  # the notebook it is handed in for


POW_SOLVED = "derivative = exponent * self.data ** (exponent - 1)"


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


def torch_cheat(student: str, defence: str, flags: frozenset[str] = frozenset()) -> Cheat:
    """The reference whose power rule torch computes, by the route ``code.TORCH_ROUTES``
    names for ``student`` (2 points honestly: the rule's own check is the one at stake)."""
    story, route = code.TORCH_ROUTES[student]
    return Cheat(
        student,
        f"the power rule by torch, reached through {story}",
        REFERENCE,
        in_cell("scalar", POW_SOLVED, code.torch_by(route)),
        honest_points=2,
        defence=defence,
        flags=flags,
    )
