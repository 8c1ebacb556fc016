"""Grading mutants: each one a student of a throwaway course, graded by autograde.

Every mutant is handed in as the reference submission (cohort.build_submission) with its
one cell replaced, under the student id ``mut-<id>``; many mutants of one assignment are
graded in one ``autograde`` run, in batches so that an interrupted run loses one batch at
most. The reference is graded in the first batch too: a reference that loses points means
the tests themselves fail, and every mutant would look killed. Outcomes are cached per
mutant under a hash of its cell and of the whole source notebook (tests, hidden ones
included), so a rerun grades only mutants it has not seen with these tests.
"""

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

from autograder.grading.assurance.cohort import REFERENCE, build_submission
from autograder.grading.assurance.mutation.mutants import Mutant
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.course_root import Course
from autograder.grading.course.grading_status import Status
from autograder.grading.course.repo_paths import notebook_path
from autograder.grading.course.scores import Score, cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde

# Grading statuses of a submission that did not finish normally: the mutant is killed
# (a student's code that hangs or crashes earns nothing), but counted apart.
CRASHED = (Status.TIMEOUT, Status.KERNEL_DIED, Status.MEMORY, Status.ERROR)


class MutationError(RuntimeError):
    """The mutation run cannot go on (the reference itself loses points)."""


@dataclass(frozen=True)
class Outcome:
    """What grading made of one submission."""

    status: str  # autograde's status: graded, timeout, kernel-died, memory, error
    score: float
    max_score: float
    lost: tuple[str, ...]  # test cells that lost points
    seconds: float

    @property
    def verdict(self) -> str:
        """killed (lost at least one point), crashed (timed out or crashed), or survived."""
        if self.status in CRASHED:
            return "crashed"
        return "killed" if self.score < self.max_score else "survived"


def source_digest(solutions_dir: Path, assignment: str) -> str:
    """A hash of every cell of the source notebook: its tests, hidden ones, and given code."""
    notebook = nbformat.read(notebook_path(solutions_dir, assignment), as_version=4)
    text = "\0".join(cell.source for cell in notebook.cells)
    return hashlib.sha256(text.encode()).hexdigest()


def cache_key(digest: str, cell: str, source: str) -> str:
    """The cache key of a submission: the source notebook's hash, the cell and its text."""
    return hashlib.sha256(f"{digest}\0{cell}\0{source}".encode()).hexdigest()[:24]


class OutcomeCache:
    """Outcomes of graded submissions, one JSON file each under ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> Outcome | None:
        """The cached outcome, or None when this submission was never graded."""
        path = self.path(key)
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        return Outcome(**{**data, "lost": tuple(data["lost"])})

    def put(self, key: str, outcome: Outcome) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path(key).write_text(json.dumps(asdict(outcome), indent=1))


def write_submission(
    student: str,
    assignment: str,
    cell: str | None,
    source: str,
    solutions_dir: Path,
    release_dir: Path,
    submitted: Path,
) -> None:
    """The reference submission, with ``cell`` (None: none) replaced by ``source``."""
    notebook = build_submission(REFERENCE, assignment, solutions_dir, release_dir)
    if cell is not None:
        target_cell = next(
            c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell
        )
        target_cell.source = source
    target = notebook_path(submitted / student, assignment)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


@dataclass(frozen=True)
class GradingOptions:
    """How mutants are graded: workers, limits, batch size."""

    workers: int = 1
    cell_timeout: int = 60
    submission_timeout: float = 600.0
    batch_size: int = 24


def estimate(pending: int, workers: int, seconds_each: float = 40.0) -> str:
    """A line saying how long grading ``pending`` submissions should take (40 s each per
    worker: measured on a loaded 2-core machine, with a release of each notebook)."""
    minutes = pending * seconds_each / max(1, workers) / 60
    return f"{pending} submissions to grade, about {minutes:.0f} min at ~{seconds_each:g} s each"


def uncached(
    assignment: str, mutants: list[Mutant], solutions_dir: Path, cache: OutcomeCache
) -> list[Mutant]:
    """The mutants whose outcome under the current tests is not cached yet."""
    digest = source_digest(solutions_dir, assignment)
    return [m for m in mutants if cache.get(cache_key(digest, m.cell, m.source)) is None]


def grade_mutants(
    assignment: str,
    mutants: list[Mutant],
    solutions_dir: Path,
    workspace: Path,
    cache: OutcomeCache,
    options: GradingOptions,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> dict[str, Outcome]:
    """mutant id -> outcome, grading only those not cached (the reference first)."""
    digest = source_digest(solutions_dir, assignment)
    keys = {m.id: cache_key(digest, m.cell, m.source) for m in mutants}
    reference_key = cache_key(digest, "", REFERENCE)
    pending = uncached(assignment, mutants, solutions_dir, cache)
    if pending:
        say(
            f"{assignment}: {len(mutants) - len(pending)} cached; "
            + estimate(len(pending), options.workers)
        )
        root = workspace / assignment
        course = generate_release(root, [assignment])
        first = True
        for start in range(0, len(pending), options.batch_size):
            batch = pending[start : start + options.batch_size]
            students = {m.student: (m.cell, m.source) for m in batch}
            if first and cache.get(reference_key) is None:
                students[REFERENCE] = (None, "")
            first = False
            for student, (cell, source) in students.items():
                write_submission(
                    student,
                    assignment,
                    cell,
                    source,
                    solutions_dir,
                    course.release,
                    course.submitted,
                )
            outcomes = grade_batch(course, assignment, list(students), options)
            if REFERENCE in outcomes:
                check_reference(assignment, outcomes[REFERENCE])
                cache.put(reference_key, outcomes[REFERENCE])
            for mutant in batch:
                cache.put(keys[mutant.id], outcomes[mutant.student])
            say(f"{assignment}: graded {min(start + len(batch), len(pending))}/{len(pending)}")
    return {m.id: cache.get(keys[m.id]) for m in mutants}


def check_reference(assignment: str, outcome: Outcome) -> None:
    """Stop when the reference loses points: the tests fail, not the mutants."""
    if outcome.verdict != "survived":
        raise MutationError(
            f"{assignment}: the reference solution got {outcome.score:g}/{outcome.max_score:g} "
            f"({outcome.status}; lost {', '.join(outcome.lost) or 'nothing'}): fix the tests"
        )


def grade_batch(
    course: Course, assignment: str, students: list[str], options: GradingOptions
) -> dict[str, Outcome]:
    """Grade ``students`` of ``course`` in one autograde run; their outcomes."""
    run = autograde(
        course,
        [assignment],
        GradingSettings(
            workers=options.workers,
            students=students,
            cell_timeout=options.cell_timeout,
            submission_timeout=options.submission_timeout,
            progress=False,
        ),
    )[0]
    records = {record.student: record for record in run.records}
    outcomes = {}
    for student in students:
        record = records[student]
        try:
            cells = cell_scores(course.db_url, student, assignment)
        except KeyError:  # nothing saved for it: a crash, counted as killed all the same
            cells = {}
        total = Score.total(cells.values())
        lost = tuple(sorted(name for name, s in cells.items() if s.score < s.max_score))
        outcomes[student] = Outcome(
            record.status, total.score, total.max_score, lost, round(record.seconds, 1)
        )
    return outcomes
