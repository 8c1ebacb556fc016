"""Does collect take a hand-in as S's only when S's account made it? Real `nbgrader collect`
on a course root whose students are accounts of this machine (daemon, bin), the hand-in
folders given to their makers with chown (so the test needs root)."""

import os
import subprocess
import sys

import nbformat
import pytest

from autograder.grading.cli import main
from autograder.grading.course import system_tools
from autograder.grading.course.nbgrader_workspace import create_workspace, kernel_environment
from autograder.grading.course.repo_paths import notebook_path
from autograder.grading.pipeline.integrity.owned_collect import SET_ASIDE, refusal

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason=system_tools.missing("root", "hand-ins owned by other accounts")
)

ASSIGNMENT = "tiny"
VICTIM, FORGER = "daemon", "bin"  # accounts every Debian machine has: uid 1 and 2
GENUINE = "2026-12-01 10:00:00.000000 UTC"


@pytest.fixture
def course(tmp_path):
    solutions = tmp_path / "solutions"
    notebook_path(solutions, ASSIGNMENT).parent.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), notebook_path(solutions, ASSIGNMENT))
    root = create_workspace(tmp_path / "course", solutions).root
    with (root / "nbgrader_config.py").open("a") as config:
        config.write(f"\nc.Exchange.root = {str(tmp_path / 'exchange')!r}\n")
    inbound = tmp_path / "exchange" / "autograd-course" / "inbound"
    inbound.mkdir(parents=True)
    return root, inbound


def hand_in(inbound, student: str, stamp: str, owner_uid: int, suffix: str = "x"):
    folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+{suffix}"
    folder.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), folder / f"{ASSIGNMENT}.ipynb")
    (folder / "timestamp.txt").write_text(stamp.split("+")[0])
    for path in (folder, *folder.iterdir()):
        os.chown(path, owner_uid, owner_uid)
    return folder


def collect(root, *args):
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", ASSIGNMENT, *args],
        cwd=root, capture_output=True, text=True, env=kernel_environment(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr


def collected_stamp(root, student):
    return (root / "submitted" / student / ASSIGNMENT / "timestamp.txt").read_text()


def test_a_hand_in_made_by_a_classmate_is_set_aside_and_the_students_own_is_collected(course):
    root, inbound = course
    hand_in(inbound, VICTIM, GENUINE, owner_uid=1)
    forged = hand_in(inbound, VICTIM, "2099-01-01 00:00:00.000000 UTC", owner_uid=2)
    said = collect(root)
    assert collected_stamp(root, VICTIM) == GENUINE
    assert f"hand-in refused for {VICTIM}: {forged.name} (it is owned by {FORGER}, not by " in said
    assert (inbound / (SET_ASIDE + forged.name)).is_dir() and not forged.exists()


def test_an_unknown_owner_and_an_unreadable_timestamp_are_refused_and_the_others_graded(course):
    root, inbound = course
    hand_in(inbound, VICTIM, GENUINE, owner_uid=1)
    hand_in(inbound, FORGER, GENUINE, owner_uid=54321)
    hand_in(inbound, FORGER, "half past nine", owner_uid=2, suffix="y")
    said = collect(root)
    assert "it is owned by uid 54321, which no account has" in said
    assert "its timestamp 'half past nine' cannot be read" in said
    assert collected_stamp(root, VICTIM) == GENUINE
    assert not (root / "submitted" / FORGER).exists()


def test_without_the_owner_check_only_the_timestamp_is_checked(course):
    root, inbound = course
    hand_in(inbound, VICTIM, GENUINE, owner_uid=2)
    collect(root, "--ExchangeCollect.check_owner=False")
    assert collected_stamp(root, VICTIM) == GENUINE


def test_the_instructor_lists_and_removes_the_refused_hand_ins(course, capsys):
    root, inbound = course
    forged = hand_in(inbound, VICTIM, GENUINE, owner_uid=2)
    collect(root)
    assert main(["refused-hand-ins", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"{SET_ASIDE}{forged.name}: it is owned by {FORGER}, not by {VICTIM}" in out
    assert out.strip().endswith("1 refused hand-in(s) in " + str(inbound))
    assert main(["refused-hand-ins", "--root", str(root), "--remove"]) == 0
    assert "removed" in capsys.readouterr().out and not list(inbound.iterdir())


def test_a_link_named_for_a_student_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / f"{VICTIM}+{ASSIGNMENT}+{GENUINE}+x"
    link.symlink_to(target)
    assert refusal(link) == "it is not a folder"
