"""Does every engine cell of the solution notebooks show exactly its reference-engine chunk?"""

import nbformat
import pytest

from autograder.grading.authoring.engine_sync import (
    chunk_source,
    read_chunks,
    render,
    strip_solution_markers,
    sync_notebook,
)
from autograder.grading.course.repo_paths import (
    REPO_ROOT,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)


@pytest.mark.parametrize("assignment", assignments())
def test_solution_notebook_engine_cells_match_the_reference_engine(assignment):
    drifted = sync_notebook(notebook_path(SOLUTIONS_DIR, assignment), write=False)
    assert not drifted, f"run `autograd-course sync-engine`: {drifted} drifted"


def test_every_engine_chunk_is_shown_in_some_notebook():
    shown = set()
    for assignment in assignments():
        notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
        shown |= {c.metadata["engine"]["chunk"] for c in notebook.cells if "engine" in c.metadata}
    engine_dir = REPO_ROOT / "autograder" / "engine"
    defined = {
        f"{module.name}:{name}"
        for module in engine_dir.glob("*.py")
        for name in read_chunks(module)
    }
    assert defined - shown == set(), "engine chunks no notebook shows"


def test_drift_is_detected_and_repaired(tmp_path):
    source = notebook_path(SOLUTIONS_DIR, "01-worked-example")
    notebook = nbformat.read(source, as_version=4)
    cell = next(
        c for c in notebook.cells if c.metadata.get("engine", {}).get("chunk") == "tensor.py:matmul"
    )
    cell.source = cell.source.replace("b2.swapaxes(-1, -2)", "b2")
    copy = tmp_path / "01-worked-example.ipynb"
    nbformat.write(notebook, copy)
    assert sync_notebook(copy, write=False) == ["tensor.py:matmul"]
    assert sync_notebook(copy) == ["tensor.py:matmul"]
    assert sync_notebook(copy, write=False) == []


def test_given_cells_have_no_solution_markers_and_exercises_do():
    assert "### BEGIN SOLUTION" in chunk_source("tensor.py:backward", 1)
    assert "### BEGIN SOLUTION" not in chunk_source("tensor.py:backward", 1, given=True)
    assert (
        strip_solution_markers("a\n    ### BEGIN SOLUTION\n    b\n    ### END SOLUTION")
        == "a\n    b"
    )


def test_unknown_chunks_are_reported_by_name():
    with pytest.raises(ValueError, match="no module"):
        chunk_source("nowhere.py:x")
    with pytest.raises(ValueError, match="tensor.py has"):
        chunk_source("tensor.py:nothing-here")


def test_a_later_part_is_shown_from_its_notebook_on():
    """``chunk: NAME from 02`` (release, a subclass of Context) is in 02 and later, not in 01."""
    assert "def release" not in chunk_source("tensor.py:function", 1)
    assert "class Context(Context):" not in chunk_source("tensor.py:function", 1)
    in_02 = chunk_source("tensor.py:function", 2)
    assert "def release" in in_02 and "### BEGIN SOLUTION" in in_02
    # Notebook 03 gets 02's part solved (its numbered regions are not 03's) and its own part.
    in_03 = chunk_source("tensor.py:function", 3)
    assert "def release" in in_03 and "### BEGIN SOLUTION" not in in_03
    assert "INFERENCE_SAVE_ERROR" in in_03 and "INFERENCE_SAVE_ERROR" not in in_02


def test_parts_must_follow_their_chunk_in_notebook_order(tmp_path):
    module = tmp_path / "engine.py"
    module.write_text("# %% chunk: a from 02\nx = 1\n")
    with pytest.raises(ValueError, match="starts with a part"):
        read_chunks(module)
    module.write_text("# %% chunk: a\nx = 1\n# %% chunk: a from 03\ny = 2\n# %% chunk: a from 02\n")
    with pytest.raises(ValueError, match="at or before an earlier part"):
        read_chunks(module)
    module.write_text("# %% chunk: a\nx = 1\n# %% chunk: a from 03\ny = 2\n")
    assert read_chunks(module) == {"a": [(0, "x = 1"), (3, "y = 2")]}


def test_only_solution_regions_are_known_in_chunks():
    """The old FROM/BEFORE weaving is gone: a leftover marker is an error, not a comment."""
    with pytest.raises(ValueError, match="only SOLUTION"):
        render("x = 1\n### BEGIN FROM 02\ny = 2\n### END FROM 02", 1, exercise=True)
    assert render("    ### BEGIN SOLUTION 02\n    y\n    ### END SOLUTION 02", 2, True) == (
        "    ### BEGIN SOLUTION\n    y\n    ### END SOLUTION"
    )
