"""A Dask worker process prepared for grading: exactly the grading environment (no PG*
variable, no cluster marker), and a child subreaper (so detached leftovers stay its own)."""

import os
import subprocess
import sys

PREPARE = """\
import os
from autograder.grading.pipeline.autograde.cluster.dask_worker import prepare_process
from autograder.grading.pipeline.autograde.cluster.orphans import CLUSTER_MARKER_ENV
from autograder.grading.pipeline.autograde.cluster.processes import is_subreaper
prepare_process()
path = os.environ["PATH"]
prepare_process()
assert os.environ["PATH"] == path, "PATH grows with every job"
leaked = sorted(n for n in os.environ if n.startswith("PG") or n == CLUSTER_MARKER_ENV)
assert not leaked, leaked
assert is_subreaper(), "not a subreaper"
print("ok")
"""


def test_a_prepared_worker_has_the_grading_environment_and_is_a_subreaper():
    environment = {**os.environ, "PGPASSWORD": "secret", "PGHOST": "/run/postgresql"}
    environment["AUTOGRADER_CLUSTER_PROCESS"] = "autograde-run-x"
    done = subprocess.run(
        [sys.executable, "-c", PREPARE], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
