"""The dispatcher: the parser of every command, each from its own module, and ``main``."""

import argparse
import faulthandler
import shlex
import signal
import sys

from autograder.grading.cli import (
    autograde,
    demo,
    doctor,
    export,
    extension,
    feedback,
    hub,
    mutate,
    redteam,
    refused_hand_ins,
    release,
    release_assignment,
    report,
    reveals,
    similarity,
    student_kit,
    sync_engine,
    translations,
)
from autograder.grading.cli.common import UsageError
from autograder.grading.course.nbgrader_workspace import NbgraderError

# In the order of the help: building the course, the term, then grading and proving it.
COMMANDS = (
    release,
    sync_engine,
    translations,
    student_kit,
    extension,
    release_assignment,
    refused_hand_ins,
    reveals,
    demo,
    doctor,
    hub,
    autograde,
    feedback,
    export,
    report,
    similarity,
    redteam,
    mutate,
)


def build_parser() -> argparse.ArgumentParser:
    """``autograd-course`` and its commands; each command's parser runs its handler."""
    parser = argparse.ArgumentParser(
        prog="autograd-course", description="Release and grade the autograd course with nbgrader."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``autograd-course``."""
    if argv is None:  # a command, not a call from Python
        # `kill -USR1 PID` prints every thread's stack to stderr: where a run that seems stuck
        # is waiting, without stopping it.
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    args = build_parser().parse_args(argv)
    # Names this run to a second command on the same course root (course_lock).
    args.command_line = shlex.join(["autograd-course", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.run(args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (NbgraderError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
