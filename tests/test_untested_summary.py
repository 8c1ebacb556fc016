"""The suite's closing lines: one per missing tool, with the count of tests it skipped, why,
and the command that brings it; checked on a real pytest run, with and without xdist."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grading.course.system_tools import missing, untested_lines

TESTS = Path(__file__).parent

SKIPPING = """\
import pytest
from autograder.grading.course.system_tools import missing

def test_runs():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_needs_a_browser(n):
    pytest.skip(missing("chromium", "no Chromium at /nowhere"))

@pytest.mark.skipif(True, reason=missing("postgres", "initdb and pg_ctl are not installed"))
def test_needs_a_database():
    pass

def test_skipped_for_another_reason():
    pytest.skip("not on Tuesdays")
"""


@pytest.mark.parametrize("processes", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_the_run_ends_with_one_line_per_missing_tool(tmp_path, processes):
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "untested_summary", "-p", "no:cacheprovider",
         *processes, "test_skipping.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines[-3:] == [
        "not tested here: the browser tests (2 tests skipped, they need Chromium: no Chromium at "
        "/nowhere); to test it: apt-get install -y chromium",
        "not tested here: the gradebook on PostgreSQL (1 test skipped, they need PostgreSQL: "
        "initdb and pg_ctl are not installed); to test it: apt-get install -y postgresql",
        "skipped: 1 test: not on Tuesdays",
    ], done.stdout
    assert "1 passed, 4 skipped" in lines[-4], lines[-4]


def test_a_run_that_skips_nothing_adds_no_line():
    assert untested_lines([]) == []


def test_reasons_are_grouped_by_tool_whatever_their_detail():
    reasons = [missing("bwrap", "no sandbox here: a"), missing("bwrap", "no sandbox here: b")]
    [line] = untested_lines(reasons)
    assert line.startswith(
        "not tested here: sandboxed grading (2 tests skipped, they need bubblewrap"
    )
    assert line.endswith("apt-get install -y bubblewrap")
