"""One grading command at a time per course root: a second one exits 2 naming the running
process; the lock of a killed run is taken over."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from autograder.grading.cli import main
from autograder.grading.course.course_lock import LOCK_NAME, course_lock

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from autograder.grading.course.course_lock import course_lock

    with course_lock(Path(sys.argv[1]), "autograd-course autograde 00-recipe"):
        print("holding", flush=True)
        time.sleep(120)
    """
)


@pytest.fixture
def course(tmp_path):
    """A folder taken for a course: a config and a source folder, nothing to grade."""
    root = tmp_path / "course"
    (root / "source" / "00-recipe").mkdir(parents=True)
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    return root


@pytest.fixture
def holder(course):
    """A second process holding the course's lock, as a running autograde does."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(course)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().strip() == "holding"
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_second_command_on_a_root_in_use_exits_2_naming_the_running_process(
    course, holder, capsys
):
    for argv in (["autograde", "00-recipe", "--student", "ada"], ["feedback", "00-recipe"]):
        assert main([*argv, "--root", str(course)]) == 2, argv
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1, argv
        assert error[0].startswith(f"error: {course} is in use by pid {holder.pid} ")
        assert "autograd-course autograde 00-recipe" in error[0]
    assert main(["export", "--root", str(course)]) == 2
    assert f"in use by pid {holder.pid} " in capsys.readouterr().err


def test_the_lock_of_a_killed_run_is_taken_over_and_released_at_the_end(course, holder):
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with course_lock(course, "autograd-course export") as left_behind:
        assert left_behind is not None and left_behind.pid == holder.pid
        assert str(os.getpid()) in (course / LOCK_NAME).read_text()
    assert (course / LOCK_NAME).read_text() == ""  # released cleanly: nothing to take over
    with course_lock(course, "autograd-course export") as left_behind:
        assert left_behind is None


def test_a_killed_run_does_not_block_the_cli(course, holder, capsys):
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    # Past the lock, autograde finds nothing handed in: its own refusal, not the lock's.
    assert main(["autograde", "00-recipe", "--root", str(course)]) == 2
    error = capsys.readouterr().err
    assert f"taking over the lock left by pid {holder.pid}" in error
    assert "no longer running" in error and "no submissions of 00-recipe" in error
