"""Does every way of releasing through nbgrader refuse a release that shows an open
assignment's answers: the project's command, `nbgrader release_assignment` and the
formgrader's API? Does --force with a reason release it and log the reason?"""

import shutil
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from tiny_course import extensions_gradebook

from autograder.grading.cli import main
from autograder.grading.course.course_root import nbgrader_config
from autograder.grading.course.nbgrader_workspace import create_workspace, kernel_environment
from autograder.grading.course.repo_paths import COURSE_DIR, SOLUTIONS_DIR

EARLIER, LATER = "01-worked-example", "02-how-it-works"  # 02's release shows 01's answers


@pytest.fixture
def course(tmp_path):
    """A course root with the course's solutions in source/ and 00-02's committed releases in
    release/ (what ``generate_assignment`` makes of them), its own exchange, 00 closed, 01 due
    in a week."""
    root = create_workspace(tmp_path / "course", SOLUTIONS_DIR).root
    for assignment in ("00-recipe", EARLIER, LATER):
        shutil.copytree(COURSE_DIR / assignment, root / "release" / assignment)
    with (root / "nbgrader_config.py").open("a") as config:
        config.write(f"\nc.Exchange.root = {str(tmp_path / 'exchange')!r}\n")
    write_term(root, due_in=timedelta(days=7))
    return root


def write_term(root, due_in: timedelta) -> None:
    """00 closed by hand (every release shows some of 00's answers), 01 due in ``due_in``."""
    due = (datetime.now(UTC) + due_in).replace(microsecond=0)
    (root / "term.toml").write_text(
        f'[due]\n"{EARLIER}" = {due.isoformat()}\n[closed]\n"00-recipe" = "graded"\n'
    )


def outbound(root):
    exchange = root.parent / "exchange" / "autograd-course" / "outbound"
    return sorted(p.name for p in exchange.iterdir()) if exchange.is_dir() else []


def test_the_command_refuses_in_one_line_naming_the_open_assignment_and_writes_nothing(
    course, capsys
):
    assert main(["release-assignment", LATER, "--root", str(course)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: release refused: {LATER} shows answers")
    assert f"{LATER} shows answers of {EARLIER}" in err[0] and "--force REASON" in err[0]
    assert "open until" in err[0] and "due " in err[0]
    assert outbound(course) == []


def test_the_earlier_assignment_itself_goes_out_and_the_inbound_is_sticky(course, capsys):
    assert main(["release-assignment", EARLIER, "--root", str(course)]) == 0
    assert outbound(course) == [EARLIER]
    inbound = course.parent / "exchange" / "autograd-course" / "inbound"
    # only a hand-in's own student (and the instructor) may rename or remove it
    assert inbound.stat().st_mode & stat.S_ISVTX


def test_force_with_a_reason_releases_and_the_reason_is_logged(course, capsys):
    reason = "01 is a practice notebook this term"
    assert main(["release-assignment", LATER, "--root", str(course), "--force", reason]) == 0
    assert outbound(course) == [LATER]
    (line,) = (course / "release-log.txt").read_text().splitlines()
    assert f"released {LATER} although {LATER} shows answers of {EARLIER}" in line
    assert line.endswith(f"forced: {reason}")


def test_an_empty_force_reason_is_refused(course, capsys):
    assert main(["release-assignment", LATER, "--root", str(course), "--force", " "]) == 2
    assert "--force needs a reason" in capsys.readouterr().err
    assert outbound(course) == []


def test_nbgraders_own_command_in_the_course_root_is_refused_too(course):
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "release_assignment", LATER],
        cwd=course, capture_output=True, text=True, env=kernel_environment(),
    )  # fmt: skip
    assert done.returncode != 0 and f"{LATER} shows answers of {EARLIER}" in done.stderr
    assert outbound(course) == []


def test_the_formgraders_release_is_refused_too(course):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = nbgrader_config(course)
    result = NbGraderAPI(CourseDirectory(config=config), config=config).release_assignment(LATER)
    assert not result["success"] and "release refused" in result["log"]
    assert outbound(course) == []


def test_what_a_release_shows_is_read_from_the_course_root(course):
    """A course root whose 02 release is a blank notebook shows nothing of 01: it goes out."""
    import nbformat

    release = course / "release" / LATER / f"{LATER}.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), release)
    assert main(["release-assignment", LATER, "--root", str(course)]) == 0


def test_a_release_after_the_assignment_closed_goes_out(course):
    write_term(course, due_in=-timedelta(days=1))
    assert main(["release-assignment", LATER, "--root", str(course)]) == 0
    assert outbound(course) == [LATER]


def test_an_extension_in_the_course_gradebook_keeps_the_release_back(course, capsys):
    write_term(course, due_in=-timedelta(days=1))  # 01 past due a day ago...
    extensions_gradebook(course, EARLIER, {"alice": 48})  # ...but alice has two days more
    assert main(["release-assignment", LATER, "--root", str(course)]) == 2
    assert "48 h extension" in capsys.readouterr().err
    assert outbound(course) == []
