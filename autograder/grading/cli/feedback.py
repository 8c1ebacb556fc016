"""``autograd-course feedback``: feedback HTML with nbgrader generate_feedback."""

import argparse

from autograder.grading.cli.common import add_command, add_root, course_at, exclusive

EXAMPLES = """
autograd-course feedback 00-recipe --root ~/course
autograd-course feedback 00-recipe --root ~/course --student alice
"""


def add(commands) -> None:
    """The feedback command's parser."""
    feedback = add_command(
        commands,
        "feedback",
        EXAMPLES,
        help="generate feedback HTML with nbgrader generate_feedback",
    )
    feedback.add_argument("assignment", help="assignment id")
    add_root(feedback)
    feedback.add_argument(
        "--student",
        metavar="S",
        help="only this student (default: all; an id starting with '-': --student=-ID)",
    )
    feedback.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the feedback of the assignment (of one student) under the course's feedback/."""
    from autograder.grading.course.nbgrader_workspace import run_nbgrader
    from autograder.grading.pipeline.feedback.exporter import exporter_options

    course = course_at(args.root, args.assignment)
    command = ["generate_feedback", args.assignment, "--force", *exporter_options(course.config)]
    if args.student:
        # One word with "=": an id starting with "-" is not taken for an option.
        command.append(f"--student={args.student}")
    with exclusive(course, args):
        run_nbgrader(course.workdir, *command)
    print(f"feedback written under {course.feedback}")
    return 0
