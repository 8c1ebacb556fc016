"""Is the exercise catalogue (autograder/checks/exercises.py) true to the solution notebooks?

Every solution cell is declared, with the parts that hold its solution regions and the test
cells that check it (each test cell of a notebook under exactly one exercise); the planted
bugs and the hand-written mutants name declared exercises. Each check is shown to name what
is wrong on a planted mistake.
"""

import ast
from functools import cache

import nbformat
from nbgrader.utils import is_grade, is_solution

from autograder.checks.exercises import CATALOGUE, Exercise
from autograder.grading.assurance.cohort import BUGS
from autograder.grading.assurance.mutation.by_hand import HAND_MUTANTS
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments, notebook_path


def solved_parts(source: str) -> tuple[str, ...]:
    """The functions and ``Class.method`` of a cell whose body holds a solution region."""
    marks = [n for n, line in enumerate(source.splitlines(), 1) if "BEGIN SOLUTION" in line]
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{node.name}.")
            elif isinstance(node, ast.FunctionDef):
                if any(node.lineno <= mark <= node.end_lineno for mark in marks):
                    found.append(prefix + node.name)

    visit(ast.parse(source).body, "")
    return tuple(found)


@cache  # the solution notebooks do not change during a run
def notebook_facts() -> dict[str, tuple[dict[str, tuple[str, ...]], list[str]]]:
    """Per notebook: {solution cell: its solved parts}, and its test cells in order."""
    facts = {}
    for assignment in assignments():
        notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
        cells = {
            cell.metadata["nbgrader"]["grade_id"]: solved_parts(cell.source)
            for cell in notebook.cells
            if cell.cell_type == "code" and is_solution(cell)
        }
        tests = [
            cell.metadata["nbgrader"]["grade_id"]
            for cell in notebook.cells
            if is_grade(cell) and not is_solution(cell)
        ]
        facts[assignment] = (cells, tests)
    return facts


def catalogue_problems(catalogue: tuple[Exercise, ...]) -> list[str]:
    """What the catalogue gets wrong about the notebooks, one line each."""
    problems = []
    declared = {(e.notebook, e.cell): e for e in catalogue}
    facts = notebook_facts()
    for assignment, (cells, tests) in facts.items():
        for cell, parts in cells.items():
            exercise = declared.get((assignment, cell))
            if exercise is None:
                problems.append(
                    f"exercise {cell!r} of {assignment} is missing from the catalogue "
                    f"(autograder/checks/exercises.py): parts {parts}"
                )
            elif set(exercise.parts) != set(parts):
                problems.append(f"{assignment}:{cell} declares parts {exercise.parts}, has {parts}")
        claimed = [t for e in catalogue if e.notebook == assignment for t in e.tests]
        for test in sorted(set(tests) - set(claimed)):
            problems.append(f"test cell {test!r} of {assignment} checks no declared exercise")
        for test in sorted({t for t in claimed if claimed.count(t) > 1 or t not in tests}):
            problems.append(f"test cell {test!r} of {assignment}: declared twice or not there")
    for notebook, cell in sorted(
        set(declared) - {(a, c) for a, (cs, _) in facts.items() for c in cs}
    ):
        problems.append(f"{notebook}:{cell} is declared but is no solution cell")
    return problems


def test_the_catalogue_is_true_to_the_notebooks():
    assert catalogue_problems(CATALOGUE) == []


def test_a_missing_exercise_is_named():
    dropped = CATALOGUE[1]
    assert catalogue_problems(tuple(e for e in CATALOGUE if e is not dropped)) == [
        f"exercise {dropped.cell!r} of {dropped.notebook} is missing from the catalogue "
        f"(autograder/checks/exercises.py): parts {dropped.parts}",
        *(
            f"test cell {t!r} of {dropped.notebook} checks no declared exercise"
            for t in dropped.tests
        ),
    ]


def test_wrong_parts_and_stray_tests_are_named():
    first = CATALOGUE[0]
    wrong = Exercise(first.notebook, first.cell, first.parts[:1], (*first.tests, "test_ghost"))
    problems = catalogue_problems((wrong, *CATALOGUE[1:]))
    assert (
        f"{first.notebook}:{first.cell} declares parts {first.parts[:1]}, has {first.parts}"
        in problems
    )
    assert f"test cell 'test_ghost' of {first.notebook}: declared twice or not there" in problems


def test_planted_bugs_and_hand_mutants_name_declared_exercises():
    declared = {(e.notebook, e.cell): set(e.tests) for e in CATALOGUE}
    for bug in BUGS:
        assert (bug.assignment, bug.cell) in declared, bug.student
        tests = {t for (n, _), ts in declared.items() if n == bug.assignment for t in ts}
        assert bug.loses <= tests, bug.student
    for mutant in HAND_MUTANTS:
        assert (mutant.assignment, mutant.cell) in declared, mutant
