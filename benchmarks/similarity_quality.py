"""How well ``autograd-course similarity`` tells copies from honest work.

``python -m benchmarks.similarity_quality``: for 01 and 09, the independent honest
solutions (tests/fixtures/independent_NN/, written apart from the reference and each other;
09's by students who had only its release) with the reference, and a copy of each honest
student disguised at three levels (tests/disguised_cohort.py: rename; reorder and swap
constructs; restructure by inlining and splitting). Prints, per notebook, the honest pairs
flagged and, per level, the copies caught, at the default settings.
"""

import sys
import tempfile
from dataclasses import replace
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from disguised_cohort import LEVELS, write_cohort  # noqa: E402

from autograder.grading.course.course_root import load_course  # noqa: E402
from autograder.grading.pipeline.similarity.run import run_similarity  # noqa: E402
from autograder.grading.pipeline.similarity.settings import Settings  # noqa: E402

ASSIGNMENTS = ("01-worked-example", "09-mixed-precision")


def main() -> None:
    """Print the table."""
    settings = Settings()
    rows = []
    for assignment in ASSIGNMENTS:
        with tempfile.TemporaryDirectory() as scratch:
            root, honest, copies = write_cohort(Path(scratch), assignment)
            run = run_similarity(load_course(root), assignment, [], replace(settings, floor=0.0))
        pairs = {frozenset({p.a, p.b}): p for p in run.pairs}
        people = [*honest, "reference"]
        honest_pairs = [pairs.get(frozenset(pair)) for pair in combinations(people, 2)]
        flagged = sum(1 for p in honest_pairs if p and p.flagged(settings))
        highest = max((p.score for p in honest_pairs if p), default=0.0)
        between = [p for p in honest_pairs if p and p.kind != "reference"]
        shapes = max((getattr(p, "structure", 0.0) for p in between), default=0.0)
        caught = {}
        for level in LEVELS:
            made = [(c, m.split(":")[1]) for c, m in copies.items() if m.startswith(level)]
            hits = sum(pairs[frozenset(pair)].flagged(settings) for pair in made)
            caught[level] = f"{hits}/{len(made)}"
        rows.append((assignment, len(honest_pairs), flagged, highest, shapes, caught))
    print(
        "| notebook | honest pairs | honest flagged | highest honest token score | "
        "highest student-pair structure | " + " | ".join(f"{lv} caught" for lv in LEVELS) + " |"
    )
    print("|---|---:|---:|---:|---:|" + "---:|" * len(LEVELS))
    for assignment, count, flagged, highest, shapes, caught in rows:
        print(
            f"| {assignment} | {count} | {flagged} | {highest:.2f} | {shapes:.2f} | "
            + " | ".join(caught[lv] for lv in LEVELS)
            + " |"
        )


if __name__ == "__main__":
    main()
