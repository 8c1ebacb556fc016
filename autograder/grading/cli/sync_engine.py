"""``autograd-course sync-engine``: the reference engine's chunks copied into the solution
notebooks (or, with --check, only their drift reported)."""

import argparse
import sys

from autograder.grading.cli.common import add_command
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments, notebook_path

EXAMPLES = """
autograd-course sync-engine
autograd-course sync-engine --check
"""


def add(commands) -> None:
    """The sync-engine command's parser."""
    sync = add_command(
        commands,
        "sync-engine",
        EXAMPLES,
        help="copy the reference engine's chunks into the solution notebooks",
    )
    sync.add_argument("--check", action="store_true", help="only report drift; exit 1 if any")
    sync.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Rewrite (or check) every solution notebook's engine cells; exit 1 on drift with --check."""
    from autograder.grading.authoring.engine_sync import sync_notebook

    drifted_any = False
    for assignment in assignments():
        drifted = sync_notebook(notebook_path(SOLUTIONS_DIR, assignment), write=not args.check)
        if drifted:
            drifted_any = True
            verb = "differs from" if args.check else "rewritten from"
            print(f"{assignment}: {', '.join(drifted)} {verb} autograder/engine")
    if args.check and drifted_any:
        print("run `autograd-course sync-engine` to update the notebooks", file=sys.stderr)
        return 1
    return 0
