"""What the commands share: bad input as UsageError, argument types, ``--root``, the course
a grading command works on and its lock."""

import argparse
import contextlib
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.grading.course.course_root import Course


class UsageError(Exception):
    """Bad input on the command line: printed as one line, exit status 2."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, each line of a text wrapped on its own: an epilog's examples stay
    one command a line, a description of one line wraps as before."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(
            super(HelpFormatter, self)._fill_text(line, width, indent) for line in text.splitlines()
        )


def add_command(commands, name: str, examples: str = "", **options) -> argparse.ArgumentParser:
    """The parser of the command ``name``, with its ``examples`` (one a line) after its help."""
    epilog = f"examples:\n{examples.strip()}" if examples.strip() else None
    return commands.add_parser(name, formatter_class=HelpFormatter, epilog=epilog, **options)


def positive(text: str) -> int:
    """A command-line count of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def fraction(text: str) -> float:
    """A command-line share, between 0 and 1."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {value}")
    return value


def aware_time(text: str) -> datetime:
    """A command-line date and time that says its time zone (an offset or Z)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 date and time") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone: add an offset, e.g. +01:00")
    return value


def add_root(parser: argparse.ArgumentParser) -> None:
    """``--root``: the nbgrader course a grading command works on."""
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="nbgrader course root holding nbgrader_config.py (default: current folder)",
    )


def course_at(root: Path, *assignments: str) -> "Course":
    """The course at ``root``, refusing a folder that is not one or an unknown assignment."""
    from autograder.grading.pipeline.autograde import AutogradeError, load_course

    try:
        course = load_course(root)
    except AutogradeError as error:
        raise UsageError(str(error)) from error
    for assignment in assignments:
        if not (course.source / assignment).is_dir():
            known = sorted(p.name for p in course.source.glob("*") if p.is_dir())
            raise UsageError(
                f"unknown assignment {assignment!r} in {course.source}; known: {known}"
            )
    return course


@contextlib.contextmanager
def exclusive(course: "Course", args: argparse.Namespace) -> Iterator[None]:
    """Hold the course root's lock meanwhile: a second command on it is bad input (exit 2)."""
    from autograder.grading.course.course_lock import CourseBusy, course_lock, pid_alive

    with contextlib.ExitStack() as stack:
        try:
            left = stack.enter_context(course_lock(course.root, args.command_line))
        except CourseBusy as error:
            raise UsageError(str(error)) from None
        if left is not None:
            now = "its pid is now another process's" if pid_alive(left.pid) else "no longer running"
            print(
                f"note: taking over the lock left by {left.describe()}: it ended without "
                f"releasing it (killed?), {now}",
                file=sys.stderr,
            )
        yield
