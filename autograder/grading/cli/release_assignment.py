"""``autograd-course release-assignment``: nbgrader's release_assignment, refused while the
release shows an open assignment's answers."""

import argparse
import copy

from autograder.grading.cli.common import UsageError, add_command, add_root, course_at

EXAMPLES = """
autograd-course release-assignment 01-worked-example
autograd-course release-assignment 02-how-it-works --force 'every hand-in of 01 is in'
"""


def add(commands) -> None:
    """The release-assignment command's parser."""
    release_one = add_command(
        commands,
        "release-assignment",
        EXAMPLES,
        help="nbgrader release_assignment, refused while the release shows an open "
        "assignment's answers (term.toml in the course root)",
    )
    release_one.add_argument("assignment")
    add_root(release_one)
    release_one.add_argument(
        "--force", metavar="REASON", help="release anyway; the reason is logged"
    )
    release_one.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Release the assignment to nbgrader's exchange; a refusal is bad input, one line."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    course = course_at(args.root, args.assignment)
    config = copy.deepcopy(course.loaded_config)  # --force's reason goes into this run's only
    if args.force is not None:
        if not args.force.strip():
            raise UsageError("--force needs a reason, e.g. --force 'every hand-in of 01 is in'")
        config.ScheduledRelease.force_reason = args.force.strip()
    result = NbGraderAPI(CourseDirectory(config=config), config=config).release_assignment(
        args.assignment
    )
    if not result["success"]:
        marker = "release refused"
        log = result.get("log", "").splitlines()
        refused = [line[line.index(marker) :] for line in log if marker in line]
        other = (result.get("error") or result.get("log") or "release failed").strip()
        raise UsageError(refused[-1] if refused else other.splitlines()[-1])
    print(f"released {args.assignment} to nbgrader's exchange")
    return 0
