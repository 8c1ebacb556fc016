"""``autograd-course autograde``: every submission graded with nbgrader autograde, in
parallel, with limits; then the integrity scan. Its grading flags are GradingSettings'."""

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.grading.cli.common import (
    UsageError,
    add_command,
    add_root,
    course_at,
    exclusive,
)
from autograder.grading.cli.grading_flags import add_grading_flags, grading_settings
from autograder.grading.course.grading_status import Status

if TYPE_CHECKING:
    from autograder.grading.course.course_root import Course
    from autograder.grading.pipeline.autograde import GradingRun

EXAMPLES = """
autograd-course autograde 00-recipe --root ~/course --workers 4
autograd-course autograde 00-recipe --root ~/course --zip submissions.zip
autograd-course autograde 00-recipe --root ~/course --student alice --force
"""


def add(commands) -> None:
    """The autograde command's parser: grading a cohort, its limits, sandbox and verdicts."""
    grade = add_command(
        commands,
        "autograde",
        EXAMPLES,
        help="grade every submission with nbgrader autograde, in parallel, with limits",
        description="Grade submitted/<student>/ASSIGNMENT/ with the real nbgrader autograde, "
        "on a Dask cluster (local worker processes, or --scheduler), a fresh kernel per "
        "submission, N at a time. A submission that loops, runs "
        "out of memory or kills its kernel is recorded in autograde_log.json and graded 0 "
        "where nothing was graded; the others are unaffected. A file nbgrader cannot grade "
        "(not a notebook, unknown grade ids) is that student's 0, status invalid-notebook "
        "with the reason. Submissions graded before "
        "and unchanged since are skipped unless --force. Exit status 0 when every "
        "submission has its grade (a student's timeout, memory, dead kernel or invalid "
        "notebook is one: 0, flagged); 1 when any failed to grade (status error, the "
        "grader's fault: every one, or some, the others then recorded and scanned); 2 for "
        "bad input.",
    )
    grade.add_argument("assignment", help="assignment id, a folder of the course's source/")
    add_root(grade)
    add_grading_flags(grade)
    grade.add_argument(
        "--zip", type=Path, metavar="FILE", help="first collect submissions from this zip"
    )
    grade.add_argument(
        "--zero-flagged",
        action="store_true",
        help="set flagged exercises' tests to 0, as c.CourseIntegrity.zero_flagged_exercises",
    )
    grade.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Grade the assignment holding the course's lock; the exit status says who failed."""
    course = course_at(args.root, args.assignment)
    with exclusive(course, args):
        try:
            graded = grade(course, args)
        except KeyboardInterrupt:
            print("\ninterrupted: jobs cancelled, grades recorded so far kept", file=sys.stderr)
            return 130
        return finish(course, args, graded)


def grade(course: "Course", args: argparse.Namespace) -> "GradingRun":
    """Collect the zip (if any), then grade; a course that cannot be graded is bad input."""
    from autograder.grading.pipeline.autograde import AutogradeError, autograde, collect_zip

    try:
        if args.zip:
            collection = collect_zip(course, args.assignment, args.zip)
            _print_collection(collection, args.zip)
        _require_submissions(course, args.assignment)
        [graded] = autograde(course, [args.assignment], grading_settings(args))
    except AutogradeError as error:
        raise UsageError(str(error)) from error
    return graded


def finish(course: "Course", args: argparse.Namespace, graded: "GradingRun") -> int:
    """Print the run's summary; scan unless nothing was graded; 1 when any failed to grade."""
    _print_summary(args.assignment, graded)
    errored = graded.with_status(Status.ERROR)
    attempted = [r for r in graded.records if r.status != Status.SKIPPED]
    if errored and len(errored) == len(attempted):
        # Nothing was graded: a fault of the grading itself (worker, gradebook), not of
        # the students' code; no scan of notebooks that were not graded.
        print(
            f"error: every submission failed to grade ({len(errored)} of {len(attempted)}), "
            f"{errored[0].student}: {(errored[0].message.splitlines() or [''])[0]}",
            file=sys.stderr,
        )
        return 1
    _scan(course, args.assignment, args.zero_flagged)
    odd = graded.with_status(Status.BAD_ID)
    if odd:
        print(
            f"error: {len(odd)} hand-in(s) not graded, their folder names are not ids nbgrader "
            "can take (above); rename each folder and run autograde again",
            file=sys.stderr,
        )
    if errored:
        print(
            f"error: {len(errored)} of {len(attempted)} submissions failed to grade (status "
            "error, 0 for now); the others are recorded; running autograde again grades them",
            file=sys.stderr,
        )
    return 1 if errored or odd else 0


def _print_summary(assignment: str, graded: "GradingRun") -> None:
    """One line of counts by status, then each failure and each graded hand-in's note."""
    counts = Counter(record.status for record in graded.records)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"{assignment}: {summary or 'nothing to grade'} in {graded.wall_seconds:.0f} s")
    for record in graded.failures:
        print(f"  {record.student}: {record.status}: {record.message}")
    for record in graded.with_status(Status.GRADED):
        if record.message:  # a note on the hand-in (its timestamp), not a failure
            print(f"  {record.student}: note: {record.message}")


def _require_submissions(course: "Course", assignment: str) -> None:
    """Refuse an assignment nobody handed in (bad input: collect first)."""
    from autograder.grading.course.course_root import handed_in

    if not any(handed_in(course, assignment)):
        raise UsageError(
            f"no submissions of {assignment}: {course.submitted}/<student>/{assignment}/ "
            "is empty or missing (collect them first, or pass --zip)"
        )


def _print_collection(collection, zip_path: Path) -> None:
    """What collecting a zip did: how many were collected, each refused upload in one line."""
    refused = collection.refused
    print(
        f"collected {len(collection.collected)} submissions from {zip_path}"
        + (f"; {len(refused)} refused (collect_log.json)" if refused else ""),
        file=sys.stderr,
    )
    for refusal in refused:
        student = refusal.student if refusal.student.isprintable() else repr(refusal.student)
        print(f"  {student or '(no student)'}: {refusal.reason}", file=sys.stderr)


def _scan(course: "Course", assignment: str, zero_flagged: bool) -> None:
    """The integrity scan after grading: flags to integrity.json, zeroing if configured."""
    from autograder.grading.pipeline.integrity import (
        FLAGS_NAME,
        scan_assignment,
        zero_flagged_setting,
    )

    zero = zero_flagged or zero_flagged_setting(course.config)
    flags, zeroed = scan_assignment(course, assignment, zero=zero)
    students = sorted({flag.student for flag in flags})
    print(
        f"integrity scan: {len(flags)} flags on {len(students)} students "
        f"({course.root / FLAGS_NAME}); {len(zeroed)} test grades set to 0"
        + ("" if zero else " (zeroing is off: c.CourseIntegrity.zero_flagged_exercises)")
    )
    for flag in flags:
        print(f"  {flag.student}: {flag.cell}, line {flag.line}: {flag.rule}: {flag.detail}")
