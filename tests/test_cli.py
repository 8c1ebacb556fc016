"""Does the instructor command line explain itself and refuse bad input clearly?"""

import subprocess
import sys

import pytest

from autograder.cli import main


def test_help_lists_the_subcommands():
    result = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for command in ("release", "sync-engine", "demo"):
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
