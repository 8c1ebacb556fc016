"""Submissions nbgrader cannot grade are the student's ``invalid-notebook`` (0, a one-line
reason, exit 0), never the grader's ``error``; a notebook whose editor stripped its nbgrader
metadata is graded as handed in, and the course's own cells raise no flag; ids starting
with "-" work; ids with spaces around them are refused before anything runs."""

import contextlib
import copy
import io
import json

import nbformat
import pytest
from nbgrader.api import Gradebook
from tiny_course import graded_cell

from autograder.grading.cli import main
from autograder.grading.course.nbgrader_workspace import (
    copy_workspace,
    create_workspace,
    run_nbgrader,
)
from autograder.grading.course.repo_paths import COURSE_DIR, assignments, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import load_course, read_log_json
from autograder.grading.pipeline.integrity import FLAGS_NAME
from autograder.grading.pipeline.integrity.scan import scan_notebook
from autograder.grading.pipeline.metadata_restore import RestoreError, restored

pytestmark = pytest.mark.slow

ASSIGNMENT = "hostile"
# The course's setup cell imports torch, as the real notebooks' do: the integrity scan
# flags that in a student's cell, never in the course's own (never run here).
SETUP = "import numpy as np\n\nif False:\n    import torch"
CORRECT = "answer = 42"
# A correct answer that also leaves odd files in the folder it is graded in: links to a
# file of the grading machine (whose mode nbgrader's last step would change: {victim}) and
# with a target too long to follow, and a FIFO.
ODD_FILES = """\
import os
os.symlink({victim!r}, "victim")
os.symlink("/" + "y" * 250 + "/" + "z" * 250, "long-link")
os.mkfifo("pipe")
answer = 42"""
VICTIM_MODE = 0o600


def course_cells() -> list[nbformat.NotebookNode]:
    """An intro, a locked setup cell, the solution cell and its graded test."""
    setup = nbformat.v4.new_code_cell(SETUP)
    setup.metadata["nbgrader"] = {
        "grade": False,
        "grade_id": "setup",
        "locked": True,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    answer = nbformat.v4.new_code_cell("answer = None")
    answer.metadata["nbgrader"] = {
        "grade": False,
        "grade_id": "answer",
        "locked": False,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    intro = nbformat.v4.new_markdown_cell("# Hostile files")
    return [intro, setup, answer, graded_cell("test_answer", "assert answer == 42")]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    path = notebook_path(base / "solutions", ASSIGNMENT)
    path.parent.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=course_cells()), path)
    root = create_workspace(base / "template", base / "solutions").root
    run_nbgrader(root, "generate_assignment", ASSIGNMENT)
    return root


def release(root) -> nbformat.NotebookNode:
    return nbformat.read(notebook_path(root / "release", ASSIGNMENT), 4)


def answered(root, code: str = CORRECT) -> nbformat.NotebookNode:
    notebook = release(root)
    notebook.cells[2].source = code
    return notebook


def stripped(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """As some editors save it: no cell keeps its nbgrader metadata."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        cell.metadata.pop("nbgrader", None)
    return notebook


def bad_files(root) -> dict[str, bytes]:
    """Student -> the bytes of a notebook nbgrader cannot grade."""
    good = answered(root)
    source_not_text = json.loads(nbformat.writes(good))
    source_not_text["cells"][2]["source"] = 42
    renamed = copy.deepcopy(good)
    renamed.cells[3].metadata["nbgrader"]["grade_id"] = "test_answer_renamed"
    added = copy.deepcopy(good)
    added.cells.append(graded_cell("test_free_points", "pass"))
    ambiguous = stripped(good)  # two cells where the release has the solution alone
    ambiguous.cells.insert(3, nbformat.v4.new_code_cell("print(answer)"))
    return {
        "not-json": b"hello, grader",
        "empty": b"",
        "not-a-notebook": b'{"homework": "done"}',
        "source-not-text": json.dumps(source_not_text).encode(),
        "renamed-grade-id": nbformat.writes(renamed).encode(),
        "added-graded-cell": nbformat.writes(added).encode(),
        "stripped-ambiguous": nbformat.writes(ambiguous).encode(),
    }


REASONS = {
    "not-json": "hostile.ipynb is not JSON",
    "empty": "hostile.ipynb is empty",
    "not-a-notebook": "hostile.ipynb is not a valid notebook",
    "source-not-text": "hostile.ipynb is not a valid notebook",
    "renamed-grade-id": "grade id 'test_answer_renamed', which is not one of the assignment's",
    "added-graded-cell": "grade id 'test_free_points', which is not one of the assignment's",
    "stripped-ambiguous": "has no nbgrader metadata and cannot tell which cell is 'answer'",
}


def hand_in(root, student: str, data: bytes) -> None:
    target = notebook_path(root / "submitted" / student, ASSIGNMENT)
    target.parent.mkdir(parents=True)
    target.write_bytes(data)


@pytest.fixture(scope="module")
def graded(template, tmp_path_factory):
    """Every hostile file, an honest student, a stripped one and "-rf", graded by the CLI;
    then the same command run again (its exit status and output kept too)."""
    root = copy_workspace(template, tmp_path_factory.mktemp("graded") / "course")
    for student, data in bad_files(root).items():
        hand_in(root, student, data)
    hand_in(root, "honest", nbformat.writes(answered(root)).encode())
    hand_in(root, "-rf", nbformat.writes(answered(root)).encode())
    hand_in(root, "stripped", nbformat.writes(stripped(answered(root))).encode())
    victim = root.parent / "victim.txt"  # a file of the grading machine, not the course's
    victim.write_text("private")
    victim.chmod(VICTIM_MODE)
    odd = ODD_FILES.format(victim=str(victim))
    hand_in(root, "odd-files", nbformat.writes(answered(root, odd)).encode())
    argv = ["autograde", ASSIGNMENT, "--root", str(root), "--verdicts", "kernel"]
    runs = []
    for _ in range(2):
        output = io.StringIO()
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            status = main(argv)
        runs.append((status, output.getvalue()))
    return root, runs


def test_files_nbgrader_cannot_grade_are_the_students_zero_not_an_error(graded):
    root, runs = graded
    (status, output), (again, output_again) = runs
    assert status == 0, output
    assert again == 0, output_again  # a rerun does not fail either
    assert "every submission failed" not in output_again and "error" not in output_again
    latest = {r["student"]: r for r in read_log_json(root)}
    db_url = load_course(root).db_url
    for student, reason in REASONS.items():
        record = latest[student]
        assert record["status"] == "invalid-notebook", record
        assert reason in record["message"] and "\n" not in record["message"], record
        assert f"{student}: invalid-notebook: " in output
        assert cell_scores(db_url, student, ASSIGNMENT)["test_answer"].score == 0
    for student in ("honest", "-rf", "stripped", "odd-files"):
        assert latest[student]["status"] == "graded", latest[student]
        assert cell_scores(db_url, student, ASSIGNMENT)["test_answer"].score == 1, student
    assert "integrity scan:" in output and "integrity scan:" in output_again


def test_odd_files_a_kernel_leaves_are_left_out_never_followed(graded):
    root, _ = graded
    folder = root / "autograded" / "odd-files" / ASSIGNMENT
    assert sorted(p.name for p in folder.iterdir()) == [f"{ASSIGNMENT}.ipynb"]
    log = (root / "autograde_logs" / ASSIGNMENT / "odd-files.txt").read_text()
    assert "'victim' (a link, removed)" in log and "'pipe' (not a regular file, removed)" in log
    assert (root.parent / "victim.txt").stat().st_mode & 0o777 == VICTIM_MODE  # not 444


def test_the_scan_runs_and_never_flags_the_courses_own_cells(graded):
    root, _ = graded
    flags = json.loads((root / FLAGS_NAME).read_text())
    students = {flag["student"] for flag in flags}
    assert not students & {"honest", "-rf", "stripped"}, flags
    unreadable = {f["student"] for f in flags if f["rule"] == "unreadable"}
    assert unreadable == set(REASONS) - {"renamed-grade-id", "added-graded-cell"}, flags


def test_the_submission_on_disk_is_left_as_handed_in(graded):
    root, _ = graded
    on_disk = nbformat.read(notebook_path(root / "submitted" / "stripped", ASSIGNMENT), 4)
    assert not any("nbgrader" in cell.metadata for cell in on_disk.cells)
    autograded = nbformat.read(notebook_path(root / "autograded" / "stripped", ASSIGNMENT), 4)
    assert autograded.cells[3].metadata["nbgrader"]["grade_id"] == "test_answer"


def test_a_student_id_starting_with_a_dash_works_in_every_command(graded, capsys):
    root, _ = graded
    argv = ["--root", str(root), "--student=-rf"]
    assert main(["autograde", ASSIGNMENT, *argv, "--verdicts", "kernel"]) == 0
    assert "1 graded" in capsys.readouterr().out
    assert main(["feedback", ASSIGNMENT, *argv]) == 0
    assert (root / "feedback" / "-rf" / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()
    assert not (root / "feedback" / "honest").exists()


@pytest.mark.parametrize(
    ("odd_id", "reason"),
    [(" bob", "leading or trailing spaces"), ("b*b", "which nbgrader reads as a pattern")],
    ids=["spaces", "pattern"],
)
def test_an_odd_id_is_refused_on_its_own_line_and_the_others_are_graded(
    template, tmp_path, capsys, odd_id, reason
):
    root = copy_workspace(template, tmp_path / "course")
    hand_in(root, "ada", nbformat.writes(answered(root)).encode())
    hand_in(root, odd_id, nbformat.writes(answered(root)).encode())
    code = main(["autograde", ASSIGNMENT, "--root", str(root), "--verdicts", "kernel"])
    captured = capsys.readouterr()
    assert code == 1, captured
    assert f"{ASSIGNMENT}: 1 bad-id, 1 graded" in captured.out
    (line,) = [line for line in captured.out.splitlines() if line.startswith(f"  {odd_id}:")]
    assert reason in line and "rename its folder" in line
    assert "rename each folder and run autograde again" in captured.err
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission(ASSIGNMENT, "ada").score == 1
        assert [s.id for s in gradebook.students] == ["ada"]
    logged = {(record["student"], record["status"]) for record in read_log_json(root)}
    assert logged == {("ada", "graded"), (odd_id, "bad-id")}


def test_stripped_metadata_is_matched_by_content_around_added_cells(template):
    given = release(template)
    mine = stripped(answered(template))
    mine.cells.insert(0, nbformat.v4.new_markdown_cell("my notes"))
    mine.cells.insert(2, nbformat.v4.new_code_cell("import math"))  # between intro and setup
    back = restored(mine, given)
    ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in back.cells]
    assert ids == [None, None, None, "setup", "answer", "test_answer"]
    assert back.cells[4].source == CORRECT
    mine.cells[3].source = "import os"  # the setup cell edited and the solution beside it
    mine.cells.insert(4, nbformat.v4.new_code_cell("x = 1"))
    with pytest.raises(RestoreError, match="cannot tell which cell is 'setup'"):
        restored(mine, given)


@pytest.mark.parametrize("assignment", assignments())
def test_each_real_release_stripped_gets_its_metadata_back_and_no_flag(assignment, tmp_path):
    path = notebook_path(COURSE_DIR, assignment)
    given = nbformat.read(path, 4)
    back = restored(stripped(given), given)
    assert [c.metadata.get("nbgrader") for c in back.cells] == [
        c.metadata.get("nbgrader") for c in given.cells
    ]
    handed_in = tmp_path / f"{assignment}.ipynb"
    nbformat.write(stripped(given), handed_in)
    assert scan_notebook(handed_in, "ada", assignment, path) == scan_notebook(
        path, "ada", assignment, path
    )
