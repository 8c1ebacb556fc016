"""``autograd-course extension``: more time for a student on an assignment (nbgrader's
gradebook), or none again with --hours 0."""

import argparse

from autograder.grading.cli.common import (
    UsageError,
    add_command,
    add_root,
    aware_time,
    course_at,
    exclusive,
)

EXAMPLES = """
autograd-course extension 01-worked-example alice --hours 48
autograd-course extension 01-worked-example alice --until 2027-02-20T23:59+01:00
autograd-course extension 01-worked-example alice --hours 0
"""


def add(commands) -> None:
    """The extension command's parser."""
    extension = add_command(
        commands,
        "extension",
        EXAMPLES,
        help="give a student more time on an assignment (nbgrader's gradebook); --hours 0 "
        "takes it back",
    )
    extension.add_argument("assignment")
    extension.add_argument("student")
    add_root(extension)
    more = extension.add_mutually_exclusive_group(required=True)
    more.add_argument("--hours", type=float, help="hours past the due date")
    more.add_argument("--until", type=aware_time, metavar="DATE", help="ISO 8601, with offset")
    extension.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Grant (or take back) the extension; note the releases that would show its answers."""
    from autograder.grading.authoring.reveals import course_reveal_map
    from autograder.grading.course.course_root import AutogradeError
    from autograder.grading.course.term import TermError
    from autograder.grading.course.term_gradebook import course_term, grant

    course = course_at(args.root, args.assignment)
    try:
        with exclusive(course, args):
            granted = grant(course, args.assignment, args.student, args.hours, args.until)
        term = course_term(course)
    except (AutogradeError, TermError) as error:
        raise UsageError(str(error)) from None
    if granted.hours:
        print(
            f"{granted.student} has until {granted.until:%Y-%m-%d %H:%M %Z} for "
            f"{granted.assignment} ({granted.hours:g} h past its due date)"
        )
    else:
        print(f"{granted.student} has no extension on {granted.assignment}")
    reveals = course_reveal_map(course.source, course.release)
    shown_by = [r for r in reveals.assignments if granted.assignment in reveals.revealed_by(r)]
    if shown_by:
        print(
            f"note: {', '.join(shown_by)} show(s) {granted.assignment}'s answers: no kit or "
            f"release holds them before {term.closes_at(granted.assignment):%Y-%m-%d %H:%M %Z} "
            "for anyone (due date + late window + longest extension)"
        )
    return 0
