"""``autograd-course demo``: release, autograde the demo cohort, export, print the grades."""

import argparse
from pathlib import Path

from autograder.grading.cli.common import add_command
from autograder.grading.course.repo_paths import BUILD_DIR

EXAMPLES = """
autograd-course demo
autograd-course demo --workspace /tmp/demo
"""


def add(commands) -> None:
    """The demo command's parser."""
    demo = add_command(
        commands,
        "demo",
        EXAMPLES,
        help="release, autograde the demo cohort, export and print the grade table",
    )
    demo.add_argument("--workspace", type=Path, default=BUILD_DIR / "demo")
    demo.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo in its workspace; exit 1 when the grades are not as expected."""
    from autograder.grading.assurance.demo import main as demo_main

    return demo_main(args.workspace)
