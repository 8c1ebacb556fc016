"""The progress cell: pass / fail / not attempted per check, without side effects or errors."""

import nbformat
import numpy as np
import pytest
import torch
from nbclient import NotebookClient

from autograder.checks import progress
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)


def graded(source: str, grade_id: str, points: float = 1) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": grade_id,
        "locked": True,
        "points": points,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    return cell


@pytest.fixture
def notebook(tmp_path):
    cells = [
        nbformat.v4.new_markdown_cell("# Title\n\n### Exercise 1: `twice`"),
        graded("assert twice(2) == 4", "test_pass", 2),
        graded(
            "assert twice(1) == 2\n### BEGIN HIDDEN TESTS\nassert False\n### END HIDDEN TESTS\n",
            "test_hidden_dropped",
        ),
        nbformat.v4.new_markdown_cell("### Exercise 2: `todo`"),
        graded("todo()", "test_not_attempted"),
        graded("assert twice(3) == 7, 'twice(3) should be 7'", "test_fail"),
        graded("never_defined()", "test_not_run"),
        graded("leak = 1\nrng.random(5)\nnp.random.rand(3)\ntorch.rand(2)\nprint('noise')", "io"),
        graded("raise SystemExit(3)", "test_exit"),
        nbformat.v4.new_code_cell("not a graded cell: never run"),
    ]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def student_namespace():
    def todo():
        raise NotImplementedError()

    return {
        "twice": lambda x: 2 * x,
        "todo": todo,
        "rng": np.random.default_rng(0),
        "np": np,
        "torch": torch,
    }


def test_each_check_gets_its_status_and_exercise(notebook):
    results = progress.collect(student_namespace(), notebook)
    table = {r.check.grade_id: (r.status, r.check.exercise, r.detail) for r in results}
    assert table["test_pass"] == ("pass", "Exercise 1: twice", "")
    assert table["test_hidden_dropped"][0] == "pass"  # the hidden block is not run
    assert table["test_not_attempted"][:2] == ("not attempted", "Exercise 2: todo")
    assert table["test_fail"] == (
        "fail",
        "Exercise 2: todo",
        "AssertionError: twice(3) should be 7",
    )
    assert table["test_not_run"][0] == "not attempted"
    assert "never_defined" in table["test_not_run"][2]
    assert table["io"][0] == "pass"
    assert table["test_exit"][0] == "fail"
    assert [r.check.points for r in results][:2] == [2.0, 1.0]


def test_checks_change_no_variable_and_no_random_stream(notebook, capsys):
    namespace = student_namespace()
    np.random.seed(1)
    torch.manual_seed(1)
    progress.collect(namespace, notebook)
    assert "leak" not in namespace
    assert namespace["rng"].random() == np.random.default_rng(0).random()
    assert np.random.rand() == np.random.RandomState(1).rand()
    torch_after = torch.rand(1)
    torch.manual_seed(1)
    assert torch.equal(torch_after, torch.rand(1))
    assert capsys.readouterr().out == ""  # the checks' own output is swallowed


def test_show_progress_prints_a_table_and_returns_nothing(notebook, capsys):
    assert progress.show_progress(student_namespace(), notebook) is None
    out = capsys.readouterr().out
    assert out.startswith("progress: 3 of 7 checks pass, 2 fail, 2 not attempted")
    assert "Exercise 2: todo" in out and "test_not_attempted" in out


def test_show_progress_never_raises(tmp_path, capsys):
    progress.show_progress({}, tmp_path / "missing.ipynb")
    progress.show_progress({}, None)
    (tmp_path / "broken.ipynb").write_text("{ not json")
    progress.show_progress({}, tmp_path / "broken.ipynb")
    out = capsys.readouterr().out
    assert out.count("progress: could not check this notebook") == 3


def test_the_html_table_is_escaped_and_marks_each_status(notebook):
    results = progress.collect(student_namespace(), notebook)
    rich = progress.format_html(results)
    assert rich.count('class="autograder-progress-row"') == 7
    assert 'data-status="not attempted"' in rich and 'data-status="fail"' in rich
    assert "twice(3) should be 7" in rich and "<script" not in rich


def test_the_course_notebooks_end_with_a_locked_ungraded_progress_cell():
    for assignment in assignments():
        for root in (SOLUTIONS_DIR, COURSE_DIR):
            cells = nbformat.read(notebook_path(root, assignment), as_version=4).cells
            last = cells[-1]
            assert last.id == "progress"
            assert f'show_progress(globals(), "{assignment}.ipynb")' in last.source
            spec = last.metadata["nbgrader"]
            assert spec["locked"] and not spec["grade"] and not spec["solution"]


def test_visible_checks_of_the_solutions_are_the_released_ones():
    for assignment in assignments():
        solution = progress.read_checks(notebook_path(SOLUTIONS_DIR, assignment))
        release = progress.read_checks(notebook_path(COURSE_DIR, assignment))
        assert [c.source.strip() for c in solution] == [c.source.strip() for c in release]
        assert solution and all("HIDDEN" not in c.source for c in solution)


@pytest.mark.slow
def test_in_the_blank_release_every_exercise_is_not_attempted():
    path = notebook_path(COURSE_DIR, "00-recipe")
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=120, allow_errors=True, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    outputs = notebook.cells[-1].outputs
    assert [o.output_type for o in outputs] == ["display_data"]
    assert outputs[0].data["text/plain"].startswith("progress: 0 of 3 checks pass, 0 fail, 3 not")
    assert outputs[0].data["text/html"].count('data-status="not attempted"') == 3
