"""``autograd-course redteam``: cheating and honest submissions graded together."""

import argparse
from pathlib import Path

from autograder.grading.cli.common import add_command
from autograder.grading.course.repo_paths import BUILD_DIR

EXAMPLES = """
autograd-course redteam
"""


def add(commands) -> None:
    """The redteam command's parser."""
    redteam = add_command(
        commands,
        "redteam",
        EXAMPLES,
        help="grade cheating and honest submissions together; print what each got",
    )
    redteam.add_argument("--workspace", type=Path, default=BUILD_DIR / "redteam")
    redteam.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the red team; exit 1 when a cheat was not contained."""
    from autograder.grading.assurance.redteam import main as redteam_main

    return redteam_main(args.workspace)
