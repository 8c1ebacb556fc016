"""``autograd-course student-kit``: the course as handed to students, with no answer in it.

A kit folder holds the kernel-side wheel (``kit_wheel``: the checks, never the reference
engine or the grading tools) and the release notebooks of the assignments the term allows,
one folder each as nbgrader's release lays them out. Which ones: ``release_schedule`` at a
point in the term (now by default), so no release in it shows an open assignment's answers;
``self_study`` gives all of them, answers shown, for someone learning alone. Everything is
checked before anything is written (a schedule the term allows, an empty target, a release
that is current with its solutions) and built in a scratch folder first, so a bad call
leaves no half-made kit behind.
"""

import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from autograder.grading.authoring.i18n.edition import Edition
from autograder.grading.authoring.kit_wheel import build_wheel
from autograder.grading.authoring.release_freshness import stale_cells
from autograder.grading.authoring.release_schedule import ScheduleError, kit_schedule
from autograder.grading.authoring.reveals import reveal_map
from autograder.grading.course.repo_paths import assignments, notebook_path
from autograder.grading.course.term import TERM_FILE, TermError, now, read_term

SELF_STUDY_WARNING = (
    "THIS KIT HOLDS ANSWERS: --self-study puts every notebook in it, and each later notebook's "
    "given cells show the solved exercises of the ones before it. Never hand it to a class."
)


class KitError(ValueError):
    """A kit that cannot be made as asked: one line for the student-kit command to print."""


@dataclass(frozen=True)
class KitRequest:
    """What to build: which assignments of which edition, into which folder, and the notes
    on the term's schedule to print with it."""

    edition: Edition
    assignments: tuple[str, ...]
    out: Path
    notes: tuple[str, ...] = ()


def request(
    edition: Edition,
    out: Path,
    *,
    through: str | None = None,
    self_study: bool = False,
    at: datetime | None = None,
    term_file: Path = TERM_FILE,
) -> KitRequest:
    """The checked request: a schedule the term allows at ``at`` (now), or up to ``through``;
    every assignment with ``self_study``; an empty or missing ``out``; current releases."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise KitError(f"{out} is not an empty folder: give a new or empty one with --out")
    if self_study:
        if through is not None:
            raise KitError("--self-study holds every notebook: give it without --through")
        ids, notes = tuple(assignments(edition.solutions)), (SELF_STUDY_WARNING,)
    else:
        try:
            term = read_term(term_file, assignments(edition.solutions))
            schedule = kit_schedule(reveal_map(edition), term, at or now(), through)
        except (TermError, ScheduleError) as error:
            raise KitError(str(error)) from None
        ids, notes = schedule.assignments, schedule.notes
    for assignment in ids:
        release = notebook_path(edition.course, assignment)
        if not release.is_file():
            raise KitError(f"{release} is missing: run `autograd-course release`")
        stale = stale_cells(notebook_path(edition.solutions, assignment), release)
        if stale:
            raise KitError(
                f"{release} is stale (differs from {edition.solutions.name}/ at "
                f"{', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''}): "
                "run `autograd-course release` and commit it"
            )
    return KitRequest(edition, ids, out, notes)


def build_kit(kit: KitRequest) -> list[Path]:
    """Write the kit into ``kit.out``; return the files written, relative to it."""
    with tempfile.TemporaryDirectory(prefix="student-kit-") as scratch:
        staged = Path(scratch) / "kit"
        staged.mkdir()
        build_wheel(staged)
        for assignment in kit.assignments:
            shutil.copytree(
                kit.edition.course / assignment,
                staged / assignment,
                ignore=shutil.ignore_patterns(".*", "__pycache__"),
            )
        kit.out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staged, kit.out, dirs_exist_ok=True)
    return sorted(path.relative_to(kit.out) for path in kit.out.rglob("*") if path.is_file())
