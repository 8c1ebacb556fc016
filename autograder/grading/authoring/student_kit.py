"""``autograd-course student-kit``: the course as handed to students, with no answer in it.

A kit folder holds the kernel-side wheel (``kit_wheel``: the checks, never the reference
engine or the grading tools) and the release notebooks of the chosen assignments, one
folder each as nbgrader's release lays them out. Everything is checked before anything is
written (known assignments, an empty target, a release that is current with its solutions)
and built in a scratch folder first, so a bad call leaves no half-made kit behind.
"""

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.authoring.i18n.edition import Edition
from autograder.grading.authoring.kit_wheel import build_wheel
from autograder.grading.authoring.release_freshness import stale_cells
from autograder.grading.course.repo_paths import assignments, notebook_path


class KitError(ValueError):
    """A kit that cannot be made as asked: one line for the student-kit command to print."""


@dataclass(frozen=True)
class KitRequest:
    """What to build: which assignments of which edition, into which folder."""

    edition: Edition
    assignments: tuple[str, ...]
    out: Path


def request(edition: Edition, chosen: list[str], out: Path) -> KitRequest:
    """The checked request: known assignments, an empty or missing ``out``, a current release."""
    known = assignments(edition.solutions)
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        raise KitError(f"unknown assignment(s) {unknown}; known: {known}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise KitError(f"{out} is not an empty folder: give a new or empty one with --out")
    ids = tuple(a for a in known if a in chosen) if chosen else tuple(known)
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
    return KitRequest(edition, ids, out)


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
