"""Hidden tests draw their inputs per student (``hidden_rng``), never from the notebook's rng.

A hidden test whose inputs come from the notebook's seeded ``rng`` sees the same numbers for
every student, so answers shared between students (or hard-coded) could pass it.
"""

import re

import nbformat
import pytest

from autograder.checks.hidden_tests import split_hidden_tests
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments, notebook_path


def hidden_blocks(assignment: str) -> list[tuple[str, str]]:
    """(grade_id, hidden source) of every test cell with hidden tests in the notebook."""
    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    return [
        (cell.metadata["nbgrader"]["grade_id"], block)
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
        for block in split_hidden_tests(cell.source)[1]
    ]


def notebook_rng_uses(hidden: str) -> list[str]:
    """Lines of a hidden block that draw from the notebook's own ``rng``."""
    return [line for line in hidden.splitlines() if re.search(r"(?<![\w.])rng\b(?!\s*=[^=])", line)]


@pytest.mark.parametrize("assignment", assignments())
def test_hidden_tests_draw_from_the_grading_rng(assignment):
    offenders = {
        grade_id: lines
        for grade_id, hidden in hidden_blocks(assignment)
        if (lines := notebook_rng_uses(hidden))
    }
    assert not offenders, (
        f"{assignment}: hidden tests draw from the notebook's rng (the same for every student); "
        f"use grading_rng = hidden_rng() from autograder.checks.seed: {offenders}"
    )


def test_the_check_catches_a_hidden_test_using_the_notebook_rng():
    assert notebook_rng_uses("x = rng.standard_normal(3)")
    assert notebook_rng_uses("model = Linear(3, 1, rng=rng)")
    assert not notebook_rng_uses(
        "x = grading_rng.standard_normal(3)\nLinear(3, 1, rng=grading_rng)"
    )


@pytest.mark.parametrize("assignment", assignments())
def test_hidden_tests_name_the_tensor_class_once(assignment):
    # checks = hidden_checks(Tensor) at the top of the block, then checks.parity(fn, inputs)
    pasted = {
        grade_id: [line.strip() for line in hidden.splitlines() if "tensor_type=Tensor" in line]
        for grade_id, hidden in hidden_blocks(assignment)
    }
    assert not any(pasted.values()), f"{assignment}: use checks = hidden_checks(Tensor): {pasted}"
