"""``autograd-course student-kit``: the kernel-side wheel and the release notebooks a point
in the term allows, written into an empty folder."""

import argparse
from pathlib import Path

from autograder.grading.cli.common import UsageError, add_command, aware_time
from autograder.grading.course.term import TERM_FILE

EXAMPLES = """
autograd-course student-kit --out build/kit
autograd-course student-kit --through 01-worked-example --edition es --out kit-es
"""


def add(commands) -> None:
    """The student-kit command's parser."""
    kit = add_command(
        commands,
        "student-kit",
        EXAMPLES,
        help="write the student kit: the kernel-side wheel (no reference engine, no grading "
        "tools) and the release notebooks, one folder each",
        description="Write the student kit of a point in the term into an empty folder: the "
        "notebooks whose releases show no open assignment's answers (term.toml gives the due "
        "dates).",
    )
    kit.add_argument("--edition", choices=("en", "es"), default="en", help="default: en")
    kit.add_argument("--out", type=Path, required=True, help="a new or empty folder for the kit")
    kit.add_argument(
        "--through",
        metavar="ASSIGNMENT",
        help="the kit up to ASSIGNMENT; assignments before it without a due date are taken as "
        "closed, and one still open by its dates refuses the kit",
    )
    kit.add_argument(
        "--at",
        type=aware_time,
        metavar="DATE",
        help="judge the term at DATE (ISO 8601 with an offset, e.g. 2027-02-09T12:00+01:00) "
        "instead of now",
    )
    kit.add_argument("--term", type=Path, default=TERM_FILE, help="the term file (term.toml)")
    kit.add_argument(
        "--self-study",
        action="store_true",
        help="every notebook at once, for someone learning alone: it HOLDS ANSWERS",
    )
    kit.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Build the kit the term allows and list its files with their sizes."""
    from autograder.grading.authoring.i18n.edition import edition
    from autograder.grading.authoring.student_kit import KitError, build_kit, request

    try:
        kit = request(
            edition(args.edition),
            args.out,
            through=args.through,
            self_study=args.self_study,
            at=args.at,
            term_file=args.term,
        )
    except KitError as error:
        raise UsageError(str(error)) from None
    for path in build_kit(kit):
        size = (kit.out / path).stat().st_size
        print(f"{size:>10,}  {path}")
    print(f"student kit for {', '.join(kit.assignments)} ({args.edition}) in {kit.out}")
    for note in kit.notes:
        print(note)
    return 0
