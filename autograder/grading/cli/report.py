"""``autograd-course report``: the grading report of assignments."""

import argparse
from pathlib import Path

from autograder.grading.cli.common import add_command, add_root, course_at

EXAMPLES = """
autograd-course report 00-recipe 01-worked-example --root ~/course
"""


def add(commands) -> None:
    """The report command's parser."""
    report = add_command(
        commands, "report", EXAMPLES, help="write the grading report of assignments"
    )
    report.add_argument("assignment", nargs="+", help="assignment ids")
    add_root(report)
    report.add_argument("--out", type=Path, metavar="DIR", help="default: ROOT/report")
    report.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the report's pages and print their paths."""
    from autograder.grading.pipeline.report.gather import write_report

    course = course_at(args.root, *args.assignment)
    out_dir = args.out or course.root / "report"
    for path in write_report(course, args.assignment, out_dir):
        print(path)
    return 0
