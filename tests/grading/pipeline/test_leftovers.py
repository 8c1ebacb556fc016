"""No process outlives its job, and the grader outlives a kernel that turns on its worker:
detached processes with a cleared environment are killed, a killed worker's leftovers too,
a stopped worker is killed by the submission time limit, honest grades are untouched.

Unsandboxed (AUTOGRADER_SANDBOX=off): in bubblewrap a kernel sees neither its worker nor
the grader (own pid namespace; test_sandbox), so these are the engine's own defences, the
ones left where bubblewrap cannot run."""

import os
import random
import signal
import subprocess
import sys

import psutil
import pytest
from tiny_course import hand_in, tiny_course

from autograder.grading.course import system_tools
from autograder.grading.course.course_lock import LOCK_NAME
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde, read_log_json
from autograder.grading.pipeline.autograde.cluster.processes import is_subreaper
from autograder.grading.pipeline.autograde.job.sandbox import SANDBOX_ENV, unavailable_reason

pytestmark = pytest.mark.slow

# Starts `sleep SECONDS` detached: its own session, a double fork, an empty environment
# (no job token), so that only its ancestry ties it to the job.
DETACH = """\
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve("/bin/sleep", ["sleep", "{seconds}"], {{}})
    os._exit(0)
os.wait()
"""
# The stopped worker's submission limit: an honest job of the one-cell tiny course takes
# about 3 s on a quiet 2-core machine, so 45 s leaves a margin of 15 for a slow or loaded
# one, and the stopper (whose worker never answers) is found after 45 s rather than 90.
HONEST_TINY_BOUND = 45
KILL_WORKER = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
STOP_WORKER = "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n"


def sleepers(seconds: str) -> list[psutil.Process]:
    """Live processes running ``sleep SECONDS``."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["cmdline"] == ["sleep", seconds]:
            if process.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(process)
    return found


@pytest.fixture(scope="module")
def rough_run(tmp_path_factory):
    """Honest, detaching, worker-killing and worker-stopping students graded in one run."""
    root = tiny_course(tmp_path_factory.mktemp("leftovers"))
    marks = {name: f"{random.randint(10**6, 10**7)}.5" for name in ("detach", "killer")}
    hand_in(root, "honest", "answer = 42")
    hand_in(root, "detacher", DETACH.format(seconds=marks["detach"]) + "answer = 42")
    hand_in(root, "killer", DETACH.format(seconds=marks["killer"]) + KILL_WORKER)
    hand_in(root, "stopper", STOP_WORKER)
    before = set(os.listdir(root))
    # Unsandboxed: this is the second line, for machines where bubblewrap cannot run (in the
    # sandbox these kernels can neither see nor signal the grader).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SANDBOX_ENV, "off")
        run = autograde(
            root,
            ["tiny"],
            GradingSettings(workers=2, submission_timeout=HONEST_TINY_BOUND, progress=False),
        )[0]
    return root, run, marks, before


def test_every_job_is_recorded_with_its_status(rough_run):
    root, run, _, _ = rough_run
    statuses = {record.student: record.status for record in run.records}
    assert statuses == {
        "honest": "graded",
        "detacher": "graded",
        "killer": "kernel-died",
        "stopper": "timeout",
    }
    scores = {s: cell_scores(f"sqlite:///{root / 'gradebook.db'}", s, "tiny") for s in statuses}
    points = {s: sum(c.score for c in cells.values()) for s, cells in scores.items()}
    assert points == {"honest": 1, "detacher": 1, "killer": 0, "stopper": 0}


def test_detached_processes_are_gone_after_the_job(rough_run):
    _, _, marks, _ = rough_run
    for who, seconds in marks.items():
        assert sleepers(seconds) == [], f"the {who}'s detached process survived the run"


def test_the_grader_is_a_subreaper_only_during_the_run(rough_run):
    assert not is_subreaper()


def test_nothing_of_the_jobs_is_left_in_the_course_root(rough_run):
    root, _, _, before = rough_run
    added = set(os.listdir(root)) - before
    assert added <= {
        "autograde_log.json",
        "autograde_logs",
        "autograded",
        "integrity.json",
        LOCK_NAME,
    }
    assert not [p for p in root.rglob("*.tmp")]


# Kills the grading command: the kernel's parent is the worker, the worker's the grader (a
# local Dask cluster's nannies run in the grading process).
KILL_GRADER = """\
import os, signal
grader = int(open(f"/proc/{os.getppid()}/stat").read().rsplit(")", 1)[1].split()[1])
os.kill(grader, signal.SIGKILL)
"""


def grade_in_a_subprocess(root, sandbox: bool = False) -> int:
    """`autograd-course autograde tiny` on one worker, as a grader would run it (without
    the sandbox unless asked: in it the kernel cannot see the grader's process)."""
    command = [sys.executable, "-m", "autograder.grading.cli", "autograde", "tiny"]
    command += ["--root", str(root), "--workers", "1", "--submission-timeout", "300"]
    env = {**os.environ, SANDBOX_ENV: "on" if sandbox else "off"}
    return subprocess.run(command, capture_output=True, timeout=900, env=env).returncode


def test_a_kernel_that_kills_the_grader_loses_no_recorded_grade(tmp_path):
    root = tiny_course(tmp_path)
    for student in ("a-honest", "z-honest"):
        hand_in(root, student, "answer = 42")
    hand_in(root, "killer", KILL_GRADER)
    before = set(os.listdir(root))

    def logged():
        return {r["student"]: r["status"] for r in read_log_json(root)}

    assert grade_in_a_subprocess(root) == -signal.SIGKILL
    assert logged() == {"a-honest": "graded"}, "graded before the killer, recorded at once"
    # The command's lock file stays (an flock on a file that is never removed: no race).
    records = {"autograde_log.json", "autograde_logs", "autograded", "integrity.json", LOCK_NAME}
    assert set(os.listdir(root)) - before <= records
    assert not list(root.rglob("*.tmp")) and not list(root.rglob("autograde-job-*"))
    # Again: the killer, in flight when the run died, is graded alone first, and kills it.
    assert grade_in_a_subprocess(root) == -signal.SIGKILL
    assert logged() == {"a-honest": "graded"}
    # The third run gives up on the killer (0, an error), grades everyone else, and exits 1:
    # a run with an errored job says so (the instructor looks at that submission).
    assert grade_in_a_subprocess(root) == 1
    assert logged() == {"a-honest": "graded", "killer": "error", "z-honest": "graded"}
    points = cell_scores(f"sqlite:///{root / 'gradebook.db'}", "killer", "tiny")
    assert sum(c.score for c in points.values()) == 0
    assert not (root / "autograde_logs" / "tiny" / "in-flight").exists()


@pytest.mark.skipif(
    unavailable_reason() is not None,
    reason=system_tools.missing("bwrap", f"no sandbox here: {unavailable_reason()}"),
)
def test_in_the_sandbox_a_kernel_cannot_kill_the_grader(tmp_path):
    root = tiny_course(tmp_path)
    hand_in(root, "a-honest", "answer = 42")
    hand_in(root, "killer", KILL_GRADER)
    assert grade_in_a_subprocess(root, sandbox=True) == 0
    # The grader survives; in its own pid namespace the kernel can only end its sandbox.
    statuses = {r["student"]: r["status"] for r in read_log_json(root)}
    assert statuses["a-honest"] == "graded" and "killer" in statuses, statuses
    points = cell_scores(f"sqlite:///{root / 'gradebook.db'}", "killer", "tiny")
    assert sum(c.score for c in points.values()) == 0
