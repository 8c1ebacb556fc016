"""``autograd-course mutate``: mutation testing of the graders, every mutant of every
exercise's solution graded with the real nbgrader through autograde."""

import argparse
import sys
from pathlib import Path

from autograder.grading.cli.common import UsageError, add_command, positive
from autograder.grading.course.repo_paths import BUILD_DIR, assignments

EXAMPLES = """
autograd-course mutate --workers 2
autograd-course mutate 00-recipe --sample 10 --seed 1
autograd-course mutate --mutant ID --no-readme
"""


def add(commands) -> None:
    """The mutate command's parser."""
    mutate = add_command(
        commands,
        "mutate",
        EXAMPLES,
        help="mutation testing of the graders: grade mutants of every exercise's solution",
        description="Mutate each exercise's reference solution (one classic mistake per "
        "mutant), grade every mutant with the real nbgrader through autograde, and report "
        "per exercise how many lost points (killed) and which kept full marks (survived, "
        "with their diffs). Outcomes are cached per mutant: a rerun grades only new ones.",
    )
    mutate.add_argument("assignment", nargs="*", help="assignment ids (default: all)")
    mutate.add_argument(
        "--sample", type=positive, metavar="N", help="grade a seeded sample of N per notebook"
    )
    mutate.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    mutate.add_argument("--workers", type=positive, default=1, help="grading workers")
    mutate.add_argument(
        "--cell-timeout", type=positive, default=60, metavar="S", help="seconds per cell"
    )
    mutate.add_argument(
        "--batch", type=positive, default=24, help="mutants graded per autograde run"
    )
    mutate.add_argument(
        "--mutant",
        action="append",
        metavar="ID",
        help="grade only this mutant (generated or by hand; repeatable); the score table stays",
    )
    mutate.add_argument("--out", type=Path, default=BUILD_DIR / "mutation")
    mutate.add_argument(
        "--no-readme",
        action="store_true",
        help="do not rewrite the score table in docs/grading-design.md",
    )
    mutate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Grade the mutants and print the score table (or each chosen mutant's verdict)."""
    from autograder.grading.assurance.mutation.grading import GradingOptions, MutationError
    from autograder.grading.assurance.mutation.report import markdown_table
    from autograder.grading.assurance.mutation.run import (
        MutateSettings,
        UnknownMutantError,
        run_mutation,
    )

    unknown = sorted(set(args.assignment) - set(assignments()))
    if unknown:
        raise UsageError(f"unknown assignment(s) {unknown}; known: {assignments()}")
    settings = MutateSettings(
        assignments=tuple(args.assignment),
        sample=args.sample,
        seed=args.seed,
        out=args.out,
        # a run of chosen mutants is no measure of the whole: the score table stays
        readme=None if args.no_readme or args.mutant else MutateSettings.readme,
        mutants=tuple(args.mutant or ()),
        options=GradingOptions(
            workers=args.workers, cell_timeout=args.cell_timeout, batch_size=args.batch
        ),
    )
    try:
        report = run_mutation(settings)
    except UnknownMutantError as error:
        raise UsageError(str(error)) from None
    except MutationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.mutant:
        for row in report.rows:
            print(
                f"{row.mutant.id} ({row.mutant.assignment}/{row.mutant.cell}): {row.verdict}"
                f" ({row.outcome.status}, {row.outcome.score:g}/{row.outcome.max_score:g};"
                f" lost {', '.join(row.outcome.lost) or 'nothing'})"
            )
    else:  # the table measures whole notebooks, not a few chosen mutants
        print(markdown_table(report))
    print(f"report: {args.out / 'report.html'}, {args.out / 'report.json'}")
    return 0
