"""``autograd-course release``: course/ (and course-es/) regenerated from solutions/."""

import argparse
import sys
from pathlib import Path

from autograder.grading.cli.common import add_command
from autograder.grading.course.repo_paths import BUILD_DIR, assignments

EXAMPLES = """
autograd-course release
autograd-course release 00-recipe --edition en
"""


def add(commands) -> None:
    """The release command's parser."""
    release = add_command(
        commands,
        "release",
        EXAMPLES,
        help="regenerate course/ (and course-es/) from solutions/ with nbgrader "
        "generate_assignment",
    )
    release.add_argument("assignment", nargs="*", help="assignment ids (default: all)")
    release.add_argument("--workspace", type=Path, default=BUILD_DIR / "release")
    release.add_argument(
        "--edition",
        default="all",
        help="en, es or all (default): the Spanish edition's solutions-es/ is regenerated "
        "from solutions/ and i18n/es/ first",
    )
    release.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Release each chosen edition in its workspace and publish it into its course folder."""
    from autograder.grading.authoring.i18n.edition import edition, editions, generate_solutions
    from autograder.grading.authoring.release import generate_release, publish_release
    from autograder.grading.course.run_progress import print_to_stderr

    ids = args.assignment or assignments()
    unknown = sorted(set(ids) - set(assignments()))
    if unknown:
        print(f"error: unknown assignment(s) {unknown}; known: {assignments()}", file=sys.stderr)
        return 2
    chosen = editions() if args.edition == "all" else [edition(args.edition)]
    for each in chosen:
        if each.translated:
            for path in generate_solutions(each):
                print(f"regenerated {path} from solutions/ and i18n/{each.language}/")
        workspace = args.workspace / each.language
        course = generate_release(workspace, ids, print_to_stderr, each.language)
        written = publish_release(course.release, each.course)
        print(f"regenerated {', '.join(written)} in {each.course}")
    return 0
