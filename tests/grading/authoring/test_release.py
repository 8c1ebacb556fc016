"""Is course/ exactly nbgrader's release of solutions/, free of answers, with every locked cell
as nbgrader recorded it?"""

import filecmp

import nbformat
import pytest
from hidden_lines import distinctive_hidden_lines
from release_rules import cells_changed

from autograder.grading.authoring.release import (
    INSTRUCTOR_METADATA,
    generate_release,
    strip_instructor_metadata,
)
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh_release(tmp_path_factory):
    return generate_release(tmp_path_factory.mktemp("release-workspace")).release


@pytest.mark.parametrize("assignment", assignments())
def test_committed_release_is_what_nbgrader_generates_now(fresh_release, assignment):
    committed = notebook_path(COURSE_DIR, assignment)
    generated = notebook_path(fresh_release, assignment)
    assert committed.is_file(), f"{committed} missing: run `make release`"
    assert filecmp.cmp(committed, generated, shallow=False), (
        f"{committed} is stale: run `make release` and commit course/"
    )


@pytest.mark.parametrize("assignment", assignments())
def test_release_has_no_solutions_or_hidden_tests(assignment):
    text = notebook_path(COURSE_DIR, assignment).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text, f"{assignment} release contains {marker!r}"
    release = nbformat.read(notebook_path(COURSE_DIR, assignment), as_version=4)
    solution = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    released = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in release.cells
        if "nbgrader" in c.metadata
    }
    for cell in solution.cells:
        spec = cell.metadata.get("nbgrader", {})
        if spec.get("solution"):
            assert "raise NotImplementedError()" in released[spec["grade_id"]]
        if spec.get("grade"):
            for line in distinctive_hidden_lines(cell.source):
                assert line not in released[spec["grade_id"]], f"hidden line leaked: {line}"
    assert all(not c.get("outputs") for c in release.cells if c.cell_type == "code")


# What a released cell's metadata may hold: nbgrader's own keys and Jupyter's. Anything else
# came from solutions/ and is either for students (add it here) or for the instructor's
# tools (add it to release.INSTRUCTOR_METADATA).
STUDENT_METADATA = {"nbgrader", "editable", "deletable", "tags", "jupyter", "collapsed"}


def unexpected_metadata(path):
    """(cell position, key) of every cell metadata key a student should not get."""
    notebook = nbformat.read(path, as_version=4)
    return [
        (position, key)
        for position, cell in enumerate(notebook.cells, start=1)
        for key in cell.metadata
        if key not in STUDENT_METADATA
    ]


@pytest.mark.parametrize("assignment", assignments())
def test_release_carries_no_instructor_metadata(fresh_release, assignment):
    for release in (COURSE_DIR, fresh_release):
        found = unexpected_metadata(notebook_path(release, assignment))
        assert not found, f"{release}/{assignment}: instructor-only cell metadata {found}"


def test_stripping_takes_every_engine_chunk_out_of_a_solution_notebook():
    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, "01-worked-example"), as_version=4)
    chunks = sum("engine" in cell.metadata for cell in notebook.cells)
    assert chunks > 0, "the solution notebook has no engine cells: the check tests nothing"
    assert "engine" in INSTRUCTOR_METADATA
    assert strip_instructor_metadata(notebook) == chunks
    assert not any(key in cell.metadata for cell in notebook.cells for key in INSTRUCTOR_METADATA)


@pytest.mark.parametrize("assignment", assignments())
def test_no_locked_cell_of_the_release_differs_from_its_checksum(assignment):
    # That no graded cell passes on the blank release is judged where the release is
    # executed as students run it, in the kit's own environment (test_kit_alone).
    notebook = nbformat.read(notebook_path(COURSE_DIR, assignment), as_version=4)
    assert cells_changed(notebook) == [], f"{assignment}: cells that differ from nbgrader's"


def test_the_checksum_probe_sees_an_edited_locked_cell_and_a_retyped_one():
    notebook = nbformat.read(notebook_path(COURSE_DIR, "00-recipe"), as_version=4)
    locked = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("locked")]
    assert len(locked) >= 2, "00-recipe has too few locked cells for the probe"
    locked[0].source += "\nprint('edited')"
    locked[1].cell_type = "raw" if locked[1].cell_type != "raw" else "code"
    assert cells_changed(notebook) == [
        locked[0].source.splitlines()[0],
        locked[1].source.splitlines()[0],
    ]


def test_solution_notebooks_have_no_outputs():
    for assignment in assignments():
        notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
        with_output = [c.id for c in notebook.cells if c.cell_type == "code" and c.outputs]
        assert not with_output, f"{assignment}: commit notebooks without outputs: {with_output}"
