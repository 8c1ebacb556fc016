"""autograde's exit status: 0 when every submission has its grade (a student's timeout, memory
error or dead kernel is one), 1 with a one-line message when any failed to grade (status
``error``: the grader's fault), every one or some."""

import pytest

from autograder.grading.cli import main
from autograder.grading.pipeline.autograde.log import GradingRecord, GradingRun


def record(student: str, status: str, message: str = "") -> GradingRecord:
    return GradingRecord(student, "00-recipe", status, 1.0, 7, message, "2026-01-01T00:00:00+00:00")


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course folder with one submission, where autograde returns ``course.records`` and
    the integrity scan only notes that it ran."""
    root = tmp_path / "course"
    (root / "source" / "00-recipe").mkdir(parents=True)
    (root / "submitted" / "alice" / "00-recipe").mkdir(parents=True)
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")

    class Fake:
        records: list[GradingRecord] = []
        scanned = False

    def fake_autograde(course, assignments, settings):
        return [GradingRun(assignment, list(Fake.records), 3.0) for assignment in assignments]

    def fake_scan(course, assignment, zero_flagged):
        Fake.scanned = True

    monkeypatch.setattr("autograder.grading.pipeline.autograde.autograde", fake_autograde)
    monkeypatch.setattr("autograder.grading.cli.autograde._scan", fake_scan)
    Fake.root = root
    return Fake


def run(course) -> int:
    return main(["autograde", "00-recipe", "--root", str(course.root)])


def test_every_job_errored_exits_1_with_one_line_and_no_scan(course, capsys):
    course.records = [
        record("alice", "error", "the grading worker failed: OSError: disk full\nmore"),
        record("bob", "error", "could not record the grades"),
        record("carol", "skipped"),
    ]
    assert run(course) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert error == [
        "error: every submission failed to grade (2 of 2), alice: the grading worker "
        "failed: OSError: disk full"
    ]
    assert not course.scanned


def test_some_jobs_errored_exits_1_after_recording_and_scanning_the_others(course, capsys):
    course.records = [record("alice", "graded"), record("bob", "error", "boom")]
    assert run(course) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("error: 1 of 2 submissions failed to grade")
    assert course.scanned


@pytest.mark.parametrize(
    "statuses",
    [
        ["graded", "timeout", "memory", "kernel-died", "skipped"],
        ["timeout", "kernel-died"],  # the students' code failed, every one: still graded
        ["skipped"],
        [],
    ],
)
def test_every_submission_with_its_grade_exits_0(course, capsys, statuses):
    course.records = [record(f"s{n}", status) for n, status in enumerate(statuses)]
    assert run(course) == 0
    assert "error" not in capsys.readouterr().err
    assert course.scanned
