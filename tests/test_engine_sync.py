"""Does every engine cell of the solution notebooks show exactly its reference-engine chunk?"""

from pathlib import Path

import nbformat
import pytest

from autograder.grading.engine_sync import (
    chunk_source,
    read_chunks,
    strip_solution_markers,
    sync_notebook,
)
from autograder.grading.repo_paths import SOLUTIONS_DIR, assignments, notebook_path


@pytest.mark.parametrize("assignment", assignments())
def test_solution_notebook_engine_cells_match_the_reference_engine(assignment):
    drifted = sync_notebook(notebook_path(SOLUTIONS_DIR, assignment), write=False)
    assert not drifted, f"run `autograd-course sync-engine`: {drifted} drifted"


def test_every_engine_chunk_is_shown_in_some_notebook():
    shown = set()
    for assignment in assignments():
        notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
        shown |= {c.metadata["engine"]["chunk"] for c in notebook.cells if "engine" in c.metadata}
    engine_dir = Path(__file__).parents[1] / "autograder" / "engine"
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
