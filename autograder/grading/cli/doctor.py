"""``autograd-course doctor``: what this machine can do for the course, and whether it can
grade safely."""

import argparse

from autograder.grading.cli.common import add_command

EXAMPLES = """
autograd-course doctor
autograd-course doctor --brief
"""


def add(commands) -> None:
    """The doctor command's parser."""
    doctor = add_command(
        commands,
        "doctor",
        EXAMPLES,
        help="what this machine can do for the course: one line per capability, then whether "
        "it can grade safely (exit 0) or what blocks grading (exit 1)",
    )
    doctor.add_argument("--brief", action="store_true", help="print the one-line verdict only")
    doctor.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the machine's capabilities; exit 1 when grading is blocked."""
    from autograder.grading.assurance.doctor import main as doctor_main

    return doctor_main(brief=args.brief)
