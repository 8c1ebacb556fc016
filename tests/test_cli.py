"""Does the instructor command line explain itself and refuse bad input clearly?"""

import subprocess
import sys

import pytest

from autograder.grading.cli import main


def test_help_lists_the_subcommands():
    result = subprocess.run(
        [sys.executable, "-m", "autograder.grading.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for command in (
        "release",
        "sync-engine",
        "demo",
        "autograde",
        "feedback",
        "export",
        "report",
        "redteam",
    ):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["release", "sync-engine", "demo"])
def test_each_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: autograd-course" in capsys.readouterr().out


def test_unknown_assignment_is_refused_with_the_known_ones(capsys):
    assert main(["release", "99-nothing"]) == 2
    error = capsys.readouterr().err
    assert "unknown assignment(s) ['99-nothing']" in error
    assert "00-recipe" in error


def test_sync_engine_check_passes_on_the_committed_notebooks(capsys):
    assert main(["sync-engine", "--check"]) == 0


GRADING_COMMANDS = ["autograde", "feedback", "export", "report"]


@pytest.mark.parametrize("command", GRADING_COMMANDS)
def test_each_grading_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: autograd-course {command}" in out and "--root" in out


def fake_course(root, assignments=("00-recipe",)):
    """The least a folder needs to be taken for a course: a config and source folders."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    for assignment in assignments:
        (root / "source" / assignment).mkdir(parents=True)
    return root


@pytest.mark.parametrize(
    "argv",
    [
        ["autograde", "00-recipe"],
        ["feedback", "00-recipe"],
        ["export"],
        ["report", "00-recipe"],
    ],
)
def test_a_root_without_nbgrader_config_is_refused(argv, tmp_path, capsys):
    assert main([*argv, "--root", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip()
    assert error == f"error: {tmp_path} is not an nbgrader course: no nbgrader_config.py"


@pytest.mark.parametrize("command", ["autograde", "feedback", "report"])
def test_an_unknown_assignment_is_refused_with_the_known_ones(command, tmp_path, capsys):
    root = fake_course(tmp_path / "course")
    assert main([command, "99-nothing", "--root", str(root)]) == 2
    error = capsys.readouterr().err
    assert "unknown assignment '99-nothing'" in error and "'00-recipe'" in error
    assert len(error.strip().splitlines()) == 1


@pytest.mark.parametrize("make_submitted", [False, True])
def test_autograde_refuses_missing_or_empty_submissions(make_submitted, tmp_path, capsys):
    root = fake_course(tmp_path / "course")
    if make_submitted:
        (root / "submitted" / "alice").mkdir(parents=True)  # alice handed in nothing for 00
    assert main(["autograde", "00-recipe", "--root", str(root)]) == 2
    error = capsys.readouterr().err
    assert "no submissions of 00-recipe" in error and "empty or missing" in error


def test_autograde_refuses_a_zip_that_is_not_one(tmp_path, capsys):
    root = fake_course(tmp_path / "course")
    bogus = tmp_path / "hand-in.zip"
    bogus.write_text("not a zip")
    assert main(["autograde", "00-recipe", "--root", str(root), "--zip", str(bogus)]) == 2
    assert "is not a zip file" in capsys.readouterr().err


def test_workers_must_be_positive(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["autograde", "00-recipe", "--workers", "0"])
    assert exit_info.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err
