"""Which releases may go out at a point in the term: none that shows an open assignment's answers.

The one rule behind the weekly kit and ``release-assignment``. A release may go out when
every assignment whose answers it shows (the reveal map) is closed: past its due date, the
late window and its longest extension, or closed by hand in ``term.toml`` with a reason.
Releases go out in course order, so a kit is the longest run of assignments from the first
whose releases may all go out.
"""

from dataclasses import dataclass
from datetime import datetime

from autograder.grading.authoring.reveals import RevealMap
from autograder.grading.course.term import Term


class ScheduleError(ValueError):
    """A release asked for that would show an open assignment's answers: one line."""


@dataclass(frozen=True)
class Schedule:
    """The assignments that may go out, and one line per thing the instructor should know."""

    assignments: tuple[str, ...]
    notes: tuple[str, ...]


def open_shown(
    release: str, reveals: RevealMap, term: Term, at: datetime, closed: frozenset[str]
) -> list[str]:
    """The open assignments whose answers ``release`` shows (``closed``: taken as closed)."""
    return [
        shown
        for shown in reveals.revealed_by(release)
        if shown not in closed and term.is_open(shown, at)
    ]


def refusal(release: str, shown: str, term: Term) -> str:
    """Why ``release`` may not go out yet, in one line, with what to do."""
    wait = "wait until then" if term.closes_at(shown) else "give it a due date"
    return (
        f"{release} shows answers of {shown}, and {term.why_open(shown)}: {wait}, or close "
        f'{shown} in term.toml with a reason ([closed] "{shown}" = "...")'
    )


def release_refusal(release: str, reveals: RevealMap, term: Term, at: datetime) -> str | None:
    """Why ``release`` may not go out at ``at`` (one line), or None when it may."""
    held = open_shown(release, reveals, term, at, frozenset())
    return refusal(release, held[0], term) if held else None


def kit_schedule(
    reveals: RevealMap, term: Term, at: datetime, through: str | None = None
) -> Schedule:
    """The assignments of the kit at ``at``; up to ``through`` when given (or refused)."""
    ids = reveals.assignments
    notes = [f"{name} closed by hand: {reason}" for name, reason in term.closed.items()]
    if through is None:
        chosen: list[str] = []
        for release in ids:
            held = open_shown(release, reveals, term, at, frozenset())
            if held:
                if term.due or term.closed:
                    notes.append(f"{release} is held back: {refusal(release, held[0], term)}")
                break
            chosen.append(release)
        if not term.due and not term.closed:
            notes.append(
                f"term.toml gives no due dates: the kit holds {', '.join(chosen)} only; set "
                "due dates there, or give --through ASSIGNMENT (the ones before it are then "
                "taken as closed)"
            )
        return Schedule(tuple(chosen), tuple(notes))
    if through not in ids:
        raise ScheduleError(f"--through {through}: unknown assignment; known: {list(ids)}")
    chosen = list(ids[: ids.index(through) + 1])
    undated = frozenset(a for a in chosen[:-1] if a not in term.due and a not in term.closed)
    for release in chosen:
        held = open_shown(release, reveals, term, at, undated)
        if held:
            raise ScheduleError(f"--through {through}: {refusal(release, held[0], term)}")
    notes += [
        f"{name} has no due date: taken as closed by --through {through}"
        for name in chosen
        if name in undated
    ]
    return Schedule(tuple(chosen), tuple(notes))
