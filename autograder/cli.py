"""``autograd-course``: the instructor's command line over nbgrader."""

import argparse
import sys
from pathlib import Path

from autograder.course import COURSE_DIR, SOLUTIONS_DIR, assignments, notebook_path
from autograder.nbgrader_workspace import NbgraderError


def _release(args: argparse.Namespace) -> int:
    from autograder.release import generate_release, publish_release

    ids = args.assignment or assignments()
    unknown = sorted(set(ids) - set(assignments()))
    if unknown:
        print(f"error: unknown assignment(s) {unknown}; known: {assignments()}", file=sys.stderr)
        return 2
    written = publish_release(generate_release(args.workspace, ids))
    print(f"regenerated {', '.join(written)} in {COURSE_DIR}")
    return 0


def _sync_engine(args: argparse.Namespace) -> int:
    from autograder.engine_sync import sync_notebook

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


def _demo(args: argparse.Namespace) -> int:
    from autograder.demo import main as demo_main

    return demo_main(args.workspace)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograd-course", description="Release and grade the autograd course with nbgrader."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    release = commands.add_parser(
        "release", help="regenerate course/ from solutions/ with nbgrader generate_assignment"
    )
    release.add_argument("assignment", nargs="*", help="assignment ids (default: all)")
    release.add_argument("--workspace", type=Path, default=Path("build/release"))
    release.set_defaults(run=_release)

    sync = commands.add_parser(
        "sync-engine", help="copy the reference engine's chunks into the solution notebooks"
    )
    sync.add_argument("--check", action="store_true", help="only report drift; exit 1 if any")
    sync.set_defaults(run=_sync_engine)

    demo = commands.add_parser(
        "demo", help="release, autograde the demo cohort, export and print the grade table"
    )
    demo.add_argument("--workspace", type=Path, default=Path("build/demo"))
    demo.set_defaults(run=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``autograd-course``."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (NbgraderError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
