"""``autograd-course mutate``: generate, sample, grade (or read from the cache), report."""

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.assurance.mutation.by_hand import hand_mutants
from autograder.grading.assurance.mutation.equivalents import read_equivalents
from autograder.grading.assurance.mutation.grading import (
    GradingOptions,
    OutcomeCache,
    estimate,
    grade_mutants,
    uncached,
)
from autograder.grading.assurance.mutation.mutants import Mutant, assignment_mutants, sample
from autograder.grading.assurance.mutation.report import (
    MutationReport,
    classify,
    markdown_table,
    rewrite_readme,
    write_html,
    write_json,
)
from autograder.grading.course.repo_paths import REPO_ROOT, SOLUTIONS_DIR, assignments


@dataclass(frozen=True)
class MutateSettings:
    """What one ``mutate`` run does and where it writes."""

    assignments: tuple[str, ...] = ()  # empty: every assignment
    sample: int | None = None  # mutants per notebook; None: all
    seed: int = 0
    out: Path = REPO_ROOT / "build" / "mutation"
    solutions_dir: Path = SOLUTIONS_DIR
    # the page with the score table (its mutation-score markers); None: leave it alone
    readme: Path | None = REPO_ROOT / "docs" / "grading-design.md"
    options: GradingOptions = GradingOptions()
    mutants: tuple[str, ...] = ()  # ids (generated or by hand) to grade alone; empty: all


class UnknownMutantError(ValueError):
    """A mutant id that names no mutant of the chosen notebooks."""


def chosen_mutants(settings: MutateSettings, assignment: str) -> tuple[list[Mutant], list[Mutant]]:
    """Every mutant of ``assignment`` (generated, then by hand), and those this run grades:
    the ones named by id; else the sample of the generated ones (or all), and every
    hand-written one."""
    generated = assignment_mutants(settings.solutions_dir, assignment)
    by_hand = hand_mutants(settings.solutions_dir, assignment)
    every = generated + by_hand
    if settings.mutants:
        return every, [m for m in every if m.id in settings.mutants]
    if settings.sample is None:
        return every, every
    return every, sample(generated, settings.sample, settings.seed) + by_hand


def run_mutation(settings: MutateSettings) -> MutationReport:
    """Grade the chosen mutants of each assignment, write the report; return it."""
    started = time.perf_counter()
    ids = list(settings.assignments) or assignments(settings.solutions_dir)
    cache = OutcomeCache(settings.out / "cache")
    equivalents = read_equivalents()
    rows, wrong, generated = [], [], {}
    plan = {assignment: chosen_mutants(settings, assignment) for assignment in ids}
    if settings.mutants:
        found = {m.id for _, chosen in plan.values() for m in chosen}
        missing = sorted(set(settings.mutants) - found)
        if missing:
            raise UnknownMutantError(
                f"no mutant of {', '.join(ids)} has the id {', '.join(missing)}"
            )
        plan = {a: (every, chosen) for a, (every, chosen) in plan.items() if chosen}
    total = sum(len(chosen) for _, chosen in plan.values())
    pending = sum(
        len(uncached(a, chosen, settings.solutions_dir, cache)) for a, (_, chosen) in plan.items()
    )
    print(
        f"{total} mutants chosen in {len(ids)} notebooks; "
        + estimate(pending, settings.options.workers),
        file=sys.stderr,
    )
    for assignment, (every, chosen) in plan.items():
        for mutant in every:
            key = (assignment, mutant.cell)
            generated[key] = generated.get(key, 0) + 1
        outcomes = grade_mutants(
            assignment,
            chosen,
            settings.solutions_dir,
            settings.out / "workspace",
            cache,
            settings.options,
        )
        assignment_rows, assignment_wrong = classify(chosen, outcomes, equivalents)
        rows += assignment_rows
        wrong += assignment_wrong
    report = MutationReport(rows, generated, wrong, settings.sample, time.perf_counter() - started)
    for stale in stale_equivalents(settings):
        print(f"equivalent.txt: {stale} names no mutant any more", file=sys.stderr)
    settings.out.mkdir(parents=True, exist_ok=True)
    write_json(report, settings.out / "report.json")
    write_html(report, settings.out / "report.html")
    if settings.readme is not None and not rewrite_readme(settings.readme, markdown_table(report)):
        print(
            f"{settings.readme} has no mutation-score markers: table not written", file=sys.stderr
        )
    return report


def stale_equivalents(settings: MutateSettings) -> list[str]:
    """Ids in the equivalent list that name no mutant of the notebooks any more."""
    known = {
        m.id
        for a in assignments(settings.solutions_dir)
        for m in assignment_mutants(settings.solutions_dir, a)
    }
    return sorted(set(read_equivalents()) - known)
