"""The grading process's orphan sweep kills a child without the cluster's marker, and leaves
the cluster's processes (started with the marker) and children older than the run."""

import subprocess
import sys

SWEEP = """\
import os, subprocess, time
from autograder.grading.pipeline.autograde.cluster.orphans import CLUSTER_MARKER_ENV, sweeping
from autograder.grading.pipeline.autograde.cluster.processes import is_subreaper
quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}  # a failure ends at once
old = subprocess.Popen(["sleep", "60"], **quiet)
with sweeping("autograde-run-x") as sweeper:
    assert is_subreaper()
    cluster = subprocess.Popen(["sleep", "61"], **quiet)  # has the marker, as Dask's do
    stray = subprocess.Popen(["sleep", "62"], env={}, **quiet)  # as an orphan: no marker
    time.sleep(0.3)
    killed = sweeper.sweep()
    assert killed == 1, f"killed {killed}"
    assert stray.poll() is not None, "the orphan survived"
    assert cluster.poll() is None and old.poll() is None, "a kept process was killed"
assert CLUSTER_MARKER_ENV not in os.environ and not is_subreaper()
assert cluster.poll() is None, "the last sweep killed a cluster process"
cluster.kill(), old.kill(), cluster.wait(), old.wait()
print("ok")
"""


def test_the_sweep_kills_orphans_only():
    done = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
