"""``autograd-course export``: the gradebook as CSV safe to open in a spreadsheet
(nbgrader's columns, or Canvas's or Moodle's gradebook import)."""

import argparse
from pathlib import Path

from autograder.grading.cli.common import UsageError, add_command, add_root, course_at, exclusive

EXAMPLES = """
autograd-course export --root ~/course
autograd-course export --root ~/course --format canvas --roster roster.csv
"""


def add(commands) -> None:
    """The export command's parser."""
    export = add_command(
        commands,
        "export",
        EXAMPLES,
        help="export the gradebook with nbgrader export, as CSV safe to open in a spreadsheet "
        "(nbgrader's columns, or Canvas's or Moodle's gradebook import)",
    )
    add_root(export)
    export.add_argument(
        "--to", type=Path, metavar="CSV", help="default: ROOT/grades.csv (grades-FORMAT.csv)"
    )
    export.add_argument(
        "--format",
        choices=("csv", "canvas", "moodle"),
        default="csv",
        help="csv: nbgrader's columns (default); canvas, moodle: their import, one row per "
        "student through --roster",
    )
    export.add_argument(
        "--roster",
        type=Path,
        metavar="CSV",
        help="nbgrader id -> LMS ids (columns student, name, lms_id, sis_user_id, sis_login_id, "
        "section, email); default: ROOT/roster.csv",
    )
    export.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Export the gradebook in the chosen format; a bad roster writes nothing (exit 2)."""
    from nbgrader.api import Gradebook

    from autograder.grading.course.nbgrader_workspace import run_nbgrader
    from autograder.grading.pipeline.lms_export import (
        EXPORTERS,
        RosterError,
        check_roster,
        read_roster,
    )

    course = course_at(args.root)
    name = "grades.csv" if args.format == "csv" else f"grades-{args.format}.csv"
    target = (args.to or course.root / name).resolve()
    options = []
    if args.format != "csv":
        roster_path = (args.roster or course.root / "roster.csv").resolve()
        try:  # checked here first, so that a bad roster writes nothing
            roster = read_roster(roster_path)
            with Gradebook(course.db_url) as gradebook:
                students = {student.id for student in gradebook.students}
            check_roster(roster, students, roster_path)
        except RosterError as error:
            raise UsageError(str(error)) from None
        plugin = EXPORTERS[args.format].rsplit(".", 1)[1]
        options.append(f"--{plugin}.roster={roster_path}")
    with exclusive(course, args):
        # nbgrader's export with this package's writers: quoted, formulas neutralised.
        exporter = f"--exporter={EXPORTERS[args.format]}"
        run_nbgrader(course.workdir, "export", exporter, *options, "--to", str(target))
    print(f"grades exported to {target} ({args.format})")
    return 0
