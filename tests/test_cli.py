"""Does the instructor command line explain itself and refuse bad input clearly?"""

import os
import subprocess
import sys
from pathlib import Path

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


def test_every_grading_setting_has_a_flag_or_a_reason_for_none():
    """A GradingSettings field is one flag of autograde (FLAGS) or Python-only, never both."""
    from autograder.grading.cli.grading_flags import FLAGS, PYTHON_ONLY, unflagged

    assert unflagged() == []
    assert not set(FLAGS) & set(PYTHON_ONLY)


def test_a_setting_planted_without_a_flag_is_named():
    import dataclasses

    from autograder.grading.cli.grading_flags import unflagged
    from autograder.grading.pipeline.grading_settings import GradingSettings

    planted = dataclasses.make_dataclass(
        "Planted",
        [("new_option", int, dataclasses.field(default=0))],
        bases=(GradingSettings,),
        frozen=True,
    )
    assert unflagged(planted) == ["new_option"]


def autograde_settings(*flags: str):
    """The GradingSettings ``autograd-course autograde 00-recipe FLAGS`` grades with."""
    from autograder.grading.cli import build_parser
    from autograder.grading.cli.grading_flags import grading_settings

    return grading_settings(build_parser().parse_args(["autograde", "00-recipe", *flags]))


def test_autograde_without_flags_grades_with_the_settings_defaults():
    from autograder.grading.pipeline.grading_settings import GradingSettings

    assert autograde_settings() == GradingSettings()


def test_autograde_flags_set_their_settings():
    settings = autograde_settings(
        "--workers", "3", "--no-sandbox", "--student", "alice", "bob", "--memory-limit", "0",
        "--submission-timeout", "60", "--verdicts", "kernel", "--cell-timeout", "5", "--force",
        "--scheduler", "tcp://host:8786",
    )  # fmt: skip
    assert (settings.workers, settings.sandbox, settings.students) == (3, False, ["alice", "bob"])
    assert (settings.memory_limit_mb, settings.submission_timeout) == (None, 60.0)
    assert (settings.verdicts, settings.cell_timeout, settings.force) == ("kernel", 5, True)
    assert settings.scheduler == "tcp://host:8786"


def test_autograde_help_shows_the_settings_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["autograde", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(0: none; default 4096)" in out and "(0: none; default 1800)" in out
    assert "examples: autograd-course autograde" in out


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


def gradebook_with(db_url, assignment, scores):
    """A gradebook where each student scored ``scores[student]`` of 2 on one test cell."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as book:
        book.add_assignment(assignment)
        book.add_notebook(assignment, assignment)
        book.add_grade_cell("test_it", assignment, assignment, max_score=2, cell_type="code")
        for student, score in scores.items():
            book.add_student(student)
            book.add_submission(assignment, student)
            book.find_grade("test_it", assignment, assignment, student).auto_score = score
        book.db.commit()


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission
def test_report_reads_the_gradebook_and_folders_the_config_names(tmp_path, capsys, monkeypatch):
    # A new gradebook runs nbgrader's `alembic` by name: this environment's.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    # The course keeps its gradebook in grades/ and its notebooks in renamed folders; a
    # decoy gradebook.db lies where nbgrader's default would be.
    root = fake_course(tmp_path / "course", ())
    settings = [
        'c.CourseDirectory.db_url = "sqlite:///grades/course.db"',
        'c.CourseDirectory.source_directory = "instructor"',
        'c.CourseDirectory.autograded_directory = "graded"',
    ]
    with (root / "nbgrader_config.py").open("a") as config:
        config.write("\n".join(settings) + "\n")
    (root / "instructor" / "00-recipe").mkdir(parents=True)
    (root / "grades").mkdir()
    gradebook_with(f"sqlite:///{root / 'grades' / 'course.db'}", "00-recipe", {"alice": 1.0})
    gradebook_with(f"sqlite:///{root / 'gradebook.db'}", "00-recipe", {"decoy": 2.0})
    assert main(["report", "00-recipe", "--root", str(root)]) == 0
    page = (root / "report" / "00-recipe" / "report.html").read_text()
    assert "<td>alice</td>" in page and "decoy" not in page
    assert capsys.readouterr().out.strip() == str(root / "report" / "00-recipe" / "report.html")


# A command stuck where a run would wait (here: while reading its arguments).
STUCK_COMMAND = """
import sys, time
from autograder.grading.cli import main

def wait_forever():
    print("waiting", flush=True)
    time.sleep(60)

sys.modules[main.__module__].build_parser = wait_forever  # the dispatcher's own
sys.argv = ["autograd-course", "autograde", "00-recipe"]
main()
"""


def test_sigusr1_prints_where_a_running_command_waits():
    """`kill -USR1 PID` on a command that seems stuck: every thread's stack on stderr, the
    command left running."""
    import signal

    stuck = subprocess.Popen(
        [sys.executable, "-c", STUCK_COMMAND], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert stuck.stdout.readline().strip() == "waiting"
        stuck.send_signal(signal.SIGUSR1)
        lines = []
        while not any("wait_forever" in line for line in lines):
            lines.append(stuck.stderr.readline())
            assert lines[-1], "".join(lines)
        assert any("thread 0x" in line.lower() for line in lines), "".join(lines)
        assert stuck.poll() is None, "the command must go on"
    finally:
        stuck.kill()
        stuck.communicate()
