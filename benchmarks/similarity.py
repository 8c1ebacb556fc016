"""How long ``autograd-course similarity`` takes on a large synthetic cohort of one notebook.

``python -m benchmarks.similarity --students 300``: writes N submissions of 01 built from
the course (the reference with a different mix of the demo cohort's planted bugs per
student, so every pair shares most of its code: the slowest case, every pair compared in
full) into a scratch course root, runs the command's function and prints a table.
"""

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.grading.assurance.cohort import BUGS, apply_bug, solved_sources
from autograder.grading.course.course_root import load_course
from autograder.grading.course.repo_paths import COURSE_DIR, SOLUTIONS_DIR, notebook_path
from autograder.grading.pipeline.similarity.compare import Settings, compare_all
from autograder.grading.pipeline.similarity.extract import Release, reference_document
from autograder.grading.pipeline.similarity.run import run_similarity

ASSIGNMENT = "01-worked-example"


def write_cohort(root: Path, students: int, seed: int) -> None:
    """``students`` submissions of 01, each the reference with a random set of planted bugs."""
    rng = random.Random(seed)
    release = nbformat.read(notebook_path(COURSE_DIR, ASSIGNMENT), 4)
    solved = solved_sources(notebook_path(SOLUTIONS_DIR, ASSIGNMENT))
    bugs = [b for b in BUGS if b.assignment == ASSIGNMENT]
    for index in range(students):
        sources = dict(solved)
        for bug in rng.sample(bugs, rng.randint(0, 2)):
            sources[bug.cell] = apply_bug(sources[bug.cell], bug)
        notebook = nbformat.from_dict(release)
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in sources:
                cell.source = sources[grade_id]
        target = notebook_path(root / "submitted" / f"s{index:04d}", ASSIGNMENT)
        target.parent.mkdir(parents=True)
        nbformat.write(notebook, target)


def main() -> None:
    """Print seconds per phase for one run over a synthetic cohort."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for folder, origin in (("source", SOLUTIONS_DIR), ("release", COURSE_DIR)):
            shutil.copytree(origin / ASSIGNMENT, root / folder / ASSIGNMENT)
        (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
        write_cohort(root, args.students, args.seed)
        course = load_course(root)
        start = time.perf_counter()
        run = run_similarity(course, ASSIGNMENT, [], Settings())
        total = time.perf_counter() - start
        # The comparison alone, on documents already read.
        release = Release(course.release / ASSIGNMENT, course.source / ASSIGNMENT)
        cohort = [d for d in run.documents.values() if d.origin == "cohort"]
        start = time.perf_counter()
        compare_all(
            cohort,
            reference_document(course.source / ASSIGNMENT),
            [],
            release.boilerplate,
            Settings(),
        )
        compared = time.perf_counter() - start
    pairs = args.students * (args.students - 1) // 2 + args.students
    print("| students | pairs compared | whole command (s) | fingerprint + compare (s) |")
    print("|---:|---:|---:|---:|")
    print(f"| {args.students} | {pairs} | {total:.1f} | {compared:.1f} |")


if __name__ == "__main__":
    main()
