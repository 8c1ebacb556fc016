"""Which assignments' answers each release shows: the reveal map, computed, never hand-kept.

A later notebook's given cells carry the solved engine of the notebooks before it, so its
release shows their answers. An assignment's answer lines are the lines of its solution
regions and hidden tests (``kit_leaks.notebook_secrets``: long enough to be specific) that
its own release and the earlier ones do not already show. A release *reveals* an assignment
when any of those lines appears in it; the share is over the solution-region lines, the
measure an instructor reads ("03 shows 100% of 02's answers").
"""

from dataclasses import dataclass
from pathlib import Path

from autograder.grading.authoring.i18n.edition import Edition
from autograder.grading.authoring.kit_leaks import notebook_secrets, release_texts
from autograder.grading.course.repo_paths import assignments, notebook_path


@dataclass(frozen=True)
class Reveal:
    """``release`` shows ``shown`` of the ``total`` solution lines of ``answers_of`` (and
    ``tests_shown`` of its hidden-test lines)."""

    release: str
    answers_of: str
    shown: int
    total: int
    tests_shown: int

    @property
    def share(self) -> float:
        """The share of ``answers_of``'s solution lines shown (0 to 1)."""
        return self.shown / self.total if self.total else 0.0


@dataclass(frozen=True)
class RevealMap:
    """The reveals of every release of one edition, in course order."""

    language: str
    assignments: tuple[str, ...]
    reveals: tuple[Reveal, ...]

    def revealed_by(self, release: str) -> list[str]:
        """The assignments whose answers ``release`` shows."""
        return [each.answers_of for each in self.reveals if each.release == release]

    def as_json(self) -> dict:
        """``{release: {assignment: {"share", "shown", "total", "tests_shown"}}}``."""
        table: dict[str, dict] = {release: {} for release in self.assignments}
        for each in self.reveals:
            table[each.release][each.answers_of] = {
                "share": round(each.share, 3),
                "shown": each.shown,
                "total": each.total,
                "tests_shown": each.tests_shown,
            }
        return {"edition": self.language, "reveals": table}


def answer_lines_of(chosen: Edition) -> dict[str, tuple[set[str], set[str]]]:
    """Per assignment, (solution lines, hidden-test lines) not shown by its release or an
    earlier one in this edition."""
    ids = assignments(chosen.solutions)
    shown = release_texts([chosen])
    lines = {}
    for number, assignment in enumerate(ids):
        solution: set[str] = set()
        tests: set[str] = set()
        for line, origin in notebook_secrets(notebook_path(chosen.solutions, assignment), ""):
            if not any(line in text for text in shown[: number + 1]):
                (solution if origin.endswith("solution") else tests).add(line)
        lines[assignment] = (solution, tests)
    return lines


def reveal_map(chosen: Edition) -> RevealMap:
    """The reveal map of ``chosen``'s committed releases."""
    ids = tuple(assignments(chosen.solutions))
    lines = answer_lines_of(chosen)
    reveals = []
    for release, text in zip(ids, release_texts([chosen]), strict=True):
        for other in ids:
            solution, tests = lines[other]
            if other == release:
                continue
            shown = sum(line in text for line in solution)
            tests_shown = sum(line in text for line in tests)
            if shown or tests_shown:
                reveals.append(Reveal(release, other, shown, len(solution), tests_shown))
    return RevealMap(chosen.language, ids, tuple(reveals))


def course_reveal_map(source: Path, release: Path) -> RevealMap:
    """The reveal map of an nbgrader course root's own ``source`` and ``release`` folders
    (a hub's instructor has the tools installed, with no repository beside them)."""
    return reveal_map(Edition("en", source, release, None))


def markdown_table(maps: list[RevealMap]) -> str:
    """The reveal maps as one markdown table: a row per release, a column per edition."""
    header = "| release | " + " | ".join(f"shows answers of ({m.language})" for m in maps) + " |"
    lines = [header, "|---|" + "---|" * len(maps)]
    for release in maps[0].assignments:
        cells = []
        for each in maps:
            shown = [r for r in each.reveals if r.release == release]
            cells.append(
                ", ".join(f"{r.answers_of[:2]} {round(100 * r.share)}%" for r in shown) or "none"
            )
        lines.append(f"| {release} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
