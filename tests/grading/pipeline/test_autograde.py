"""Parallel autograding: same grades as plain nbgrader, faulty students contained, resumable."""

import dataclasses
import datetime as dt
import json
import math
import os
import shutil
import sqlite3
import time

import nbformat
import psutil
import pytest
from nbgrader.api import Gradebook
from tiny_course import graded_cell

from autograder.checks.seed import student_seed
from autograder.grading.assurance.cohort import BLANK, REFERENCE, build_submission
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.nbgrader_workspace import (
    copy_workspace,
    create_workspace,
    run_nbgrader,
)
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import (
    JOB_TOKEN_ENV,
    LOG_NAME,
    GradingSettings,
    autograde,
    collect_zip,
    load_course,
    read_log_json,
    snapshot_gradebook,
)
from autograder.grading.pipeline.autograde.job.gradebook import job_gradebook_bytes, read_grade_rows
from autograder.grading.pipeline.autograde.job.spec import Job
from autograder.grading.pipeline.autograde.merge import copy_auto_grades

pytestmark = pytest.mark.slow

RECIPE, GRAPH = "00-recipe", "02-how-it-works"
# A subset of the demo cohort: reference, blank and the planted bugs of these notebooks.
COHORT = {
    RECIPE: [REFERENCE, BLANK, "bug-power-rule", "bug-no-grad-not-restored"],
    GRAPH: [REFERENCE, "bug-graph-kept"],
}
TABLES = ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")

# Faults typed at the top of 00-recipe's no_grad solution cell: the cell stops there, so
# no_grad is never defined and test_no_grad fails; the cells before it are unaffected.
FAULTS = {
    "infinite-loop": "while True:\n    pass\n",
    "memory-bomb": (
        "def grow():\n    blocks = []\n    while True:\n        blocks.append(bytearray(2**27))\n"
        "\n\ngrow()\n"
    ),
    "kernel-exit": "import os\n\nos._exit(1)\n",
    # Tries to kill the grading worker that started this kernel: in the sandbox neither its
    # pid (JPY_PARENT_PID is unset) nor the worker itself (own pid namespace) is there, and
    # the parent it sees is the sandbox's init, which ignores the signal.
    "worker-kill": (
        "import os\n\nos.kill(int(os.environ.get('JPY_PARENT_PID') or os.getppid()), 9)\n"
    ),
}


def hand_in(root, student, assignment, notebook):
    target = notebook_path(root / "submitted" / student, assignment)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


def with_fault(notebook, code):
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "no_grad":
            cell.source = code + "\n" + cell.source
    return notebook


def row_counts(root):
    with sqlite3.connect(root / "gradebook.db") as db:
        count = "SELECT COUNT(*) FROM {}"
        return {table: db.execute(count.format(table)).fetchone()[0] for table in TABLES}


def scores(root, student, assignment):
    return cell_scores(f"sqlite:///{root / 'gradebook.db'}", student, assignment)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A released workspace for the two notebooks, with the cohort subset handed in."""
    root = tmp_path_factory.mktemp("autograde") / "template"
    release = generate_release(root, [RECIPE, GRAPH]).release
    for assignment, students in COHORT.items():
        for student in students:
            notebook = build_submission(student, assignment, SOLUTIONS_DIR, release)
            hand_in(root, student, assignment, notebook)
    return root


@pytest.fixture(scope="module")
def sequential(template):
    """The cohort graded by plain ``nbgrader autograde``, one submission after the other."""
    root = copy_workspace(template, template.parent / "sequential")
    for assignment in COHORT:
        run_nbgrader(root, "autograde", assignment)
    return root


@pytest.fixture(scope="module")
def parallel(template):
    root = copy_workspace(template, template.parent / "parallel")
    settings = GradingSettings(workers=2, progress=False)
    runs = dict(zip(COHORT, autograde(root, list(COHORT), settings), strict=True))
    return root, runs


def test_parallel_grades_equal_sequential_nbgrader_cell_by_cell(parallel, sequential):
    root, runs = parallel
    for assignment, students in COHORT.items():
        assert sorted(r.student for r in runs[assignment].records) == sorted(students)
        assert {r.status for r in runs[assignment].records} == {"graded"}
        for student in students:
            got = scores(root, student, assignment)
            assert got == scores(sequential, student, assignment), (student, assignment)
            assert notebook_path(root / "autograded" / student, assignment).is_file()
    assert row_counts(root) == row_counts(sequential)


def test_log_has_one_record_per_submission_with_its_seed(parallel):
    root, _ = parallel
    records = read_log_json(root)
    assert len(records) == sum(len(s) for s in COHORT.values())
    for record in records:
        assert set(record) == {
            "student",
            "assignment",
            "status",
            "seconds",
            "seed",
            "message",
            "finished_at",
            "sandbox",
            "late_inputs",
        }
        assert record["sandbox"] == "bubblewrap"
        assert record["seed"] == student_seed(record["student"], record["assignment"])
    assert not list(root.glob(".autograde-jobs-*")), "job folders are cleaned up"


def test_resume_skips_graded_and_regrades_changed_or_named(parallel):
    root, _ = parallel
    before = row_counts(root)
    run = autograde(root, [RECIPE], GradingSettings(workers=2, progress=False))[0]
    assert {r.status for r in run.records} == {"skipped"}
    assert len(read_log_json(root)) == sum(len(s) for s in COHORT.values())  # skips not logged
    # A submission handed in again after grading is graded again, and only it.
    changed = notebook_path(root / "submitted" / BLANK, RECIPE)
    os.utime(changed, (time.time() + 5, time.time() + 5))
    run = autograde(root, [RECIPE], GradingSettings(workers=2, progress=False))[0]
    graded = [r.student for r in run.records if r.status == "graded"]
    assert graded == [BLANK]
    run = autograde(root, [RECIPE], GradingSettings(students=[REFERENCE], progress=False))[0]
    assert [(r.student, r.status) for r in run.records] == [(REFERENCE, "graded")]
    assert row_counts(root) == before  # regrading adds no rows


def test_a_jobs_gradebook_holds_no_other_students_data(parallel, tmp_path):
    """The student's kernel can read its job folder: no one else's grades, comments, names."""
    root, _ = parallel
    copy = tmp_path / "course.db"
    course = dataclasses.replace(load_course(root), db_url=f"sqlite:///{copy}")
    shutil.copyfile(root / "gradebook.db", copy)
    with Gradebook(course.db_url) as book:
        book.update_or_create_student(REFERENCE, first_name="Ada", email="ada@example.org")
        book.find_submission(RECIPE, REFERENCE).extension = dt.timedelta(days=2)
        book.db.commit()
    other = b"bug-no-grad-not-restored"  # a student id found nowhere in the assignments
    assert other in copy.read_bytes()
    (tmp_path / "snapshot").mkdir()
    snapshot = snapshot_gradebook(course, tmp_path / "snapshot" / "gradebook.db")
    assert row_counts(snapshot.parent) == dict.fromkeys(TABLES, 0)
    assert other not in snapshot.read_bytes(), "removed rows must not linger in free pages"
    with Gradebook(f"sqlite:///{snapshot}") as book:
        assert sorted(a.name for a in book.assignments) == sorted(COHORT)
    # The job's gradebook adds the graded student's own rows, extension included.
    job_gradebook = tmp_path / "job.db"
    job_gradebook.write_bytes(job_gradebook_bytes(course, snapshot, RECIPE, REFERENCE))
    assert other not in job_gradebook.read_bytes()
    job_db_url = f"sqlite:///{job_gradebook}"
    with Gradebook(job_db_url) as book:
        assert [s.id for s in book.students] == [REFERENCE]
        assert book.find_submission(RECIPE, REFERENCE).extension == dt.timedelta(days=2)
    expected = scores(root, REFERENCE, RECIPE)
    rows = read_grade_rows(job_db_url, RECIPE, REFERENCE)
    copy_auto_grades(rows, course, RECIPE, REFERENCE)  # the merge keeps the name
    with Gradebook(course.db_url) as book:
        assert book.find_student(REFERENCE).first_name == "Ada"
    assert cell_scores(course.db_url, REFERENCE, RECIPE) == expected


# How many times the honest reference's whole grading (measured in this run) one cell may
# take before it is a timeout: honest cells stay far below it on any machine, however slow
# or loaded, and the infinite loop still ends in seconds on a quiet one.
CALIBRATED_MARGIN = 3
SHORTEST_CELL_TIMEOUT = 12


def calibrated_cell_timeout(parallel) -> int:
    """A cell timeout from this machine's speed now: the margin times the seconds the
    reference's whole 00-recipe grading took in the ``parallel`` run (at least 12 s)."""
    _, runs = parallel
    seconds = next(r.seconds for r in runs[RECIPE].records if r.student == REFERENCE)
    return max(SHORTEST_CELL_TIMEOUT, math.ceil(CALIBRATED_MARGIN * seconds))


@pytest.fixture(scope="module")
def faulty(template, sequential, parallel):
    """Honest students graded together with an infinite loop, a memory bomb and os._exit,
    under a cell timeout calibrated on the reference's grading time in this run."""
    root = copy_workspace(template, template.parent / "faulty")
    shutil.rmtree(root / "submitted")
    reference = nbformat.read(notebook_path(template / "submitted" / REFERENCE, RECIPE), 4)
    for student in (REFERENCE, "bug-power-rule"):
        shutil.copytree(template / "submitted" / student, root / "submitted" / student)
    for student, code in FAULTS.items():
        hand_in(root, student, RECIPE, with_fault(nbformat.from_dict(reference), code))
    timeout = calibrated_cell_timeout(parallel)
    run = autograde(
        root,
        [RECIPE],
        GradingSettings(workers=2, cell_timeout=timeout, memory_limit_mb=2048, progress=False),
    )[0]
    return root, run


def test_faulty_submissions_are_recorded_and_contained(faulty, sequential):
    root, run = faulty
    status = {r.student: r.status for r in run.records}
    why = [(r.student, r.status, r.message) for r in run.records]
    assert status == {
        REFERENCE: "graded",
        "bug-power-rule": "graded",
        "infinite-loop": "timeout",
        "memory-bomb": "memory",
        "kernel-exit": "kernel-died",
        "worker-kill": "graded",
    }, why
    for student in (REFERENCE, "bug-power-rule"):
        assert scores(root, student, RECIPE) == scores(sequential, student, RECIPE)
    # The sandbox's init ignores the signal: nothing is lost.
    assert scores(root, "worker-kill", RECIPE) == scores(sequential, REFERENCE, RECIPE)
    # The loop and the bomb stop no_grad's cell: only test_no_grad is lost.
    for student in ("infinite-loop", "memory-bomb"):
        got = scores(root, student, RECIPE)
        assert got["test_no_grad"].score == 0
        assert all(s.score == s.max_score for n, s in got.items() if n != "test_no_grad")
    # A dead kernel saves nothing: in the gradebook with 0 everywhere, no autograded copy.
    # (A killed worker, possible only unsandboxed, is tested in test_sandbox.)
    for student in ("kernel-exit",):
        died = scores(root, student, RECIPE)
        assert died and all(s.score == 0 for s in died.values())
        assert not (root / "autograded" / student).exists()
        kept = (root / "autograde_logs" / RECIPE / f"{student}.txt").read_text()
        # A dead kernel is graded once more (it may have died of something passing).
        assert "=== second attempt ===" in kept
        died_record = next(r for r in run.records if r.student == student)
        assert "twice" in died_record.message
    with sqlite3.connect(root / "gradebook.db") as db:
        assert db.execute("SELECT COUNT(*) FROM submitted_assignment").fetchone()[0] == 6


SEED_PROBE = (
    "import os\n\nfrom autograder.checks.seed import SEED_ENV, hidden_rng\n\n"
    "print(os.environ.get(SEED_ENV), hidden_rng().integers(10**9))"
)


def tiny_course(base, assignment, cells):
    """A released course with one assignment made of ``cells``."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.extend(cells)
    path = notebook_path(base / "solutions", assignment)
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    root = create_workspace(base / "template", base / "solutions").root
    run_nbgrader(root, "generate_assignment", assignment)
    return root


@pytest.fixture(scope="module")
def probe_template(tmp_path_factory):
    """A course with one tiny assignment ``probe``: a seed-printing cell and a graded one."""
    cells = [
        nbformat.v4.new_code_cell(SEED_PROBE),
        graded_cell("test_probe", "assert hidden_rng() is not None"),
    ]
    return tiny_course(tmp_path_factory.mktemp("probe"), "probe", cells)


@pytest.fixture
def probe(probe_template, tmp_path):
    """A fresh copy of the probe course and its released notebook."""
    root = copy_workspace(probe_template, tmp_path / "course")
    return root, nbformat.read(notebook_path(root / "release", "probe"), 4)


def seed_output(root, student):
    notebook = nbformat.read(notebook_path(root / "autograded" / student, "probe"), 4)
    return notebook.cells[0].outputs[0]["text"].split()


def test_each_kernel_sees_its_students_seed_and_force_regrades_the_same(probe):
    root, release = probe
    for student in ("ada", "grace"):
        hand_in(root, student, "probe", release)
    first = autograde(root, ["probe"], GradingSettings(workers=2, progress=False))[0]
    assert {r.status for r in first.records} == {"graded"}
    draws = {}
    for student in ("ada", "grace"):
        seed, draw = seed_output(root, student)
        assert int(seed) == student_seed(student, "probe")
        draws[student] = draw
    assert draws["ada"] != draws["grace"]
    assert {
        r.status for r in autograde(root, ["probe"], GradingSettings(progress=False))[0].records
    } == {"skipped"}
    again = autograde(root, ["probe"], GradingSettings(workers=2, force=True, progress=False))[0]
    assert {r.status for r in again.records} == {"graded"}
    assert {s: seed_output(root, s)[1] for s in draws} == draws  # same draws on a regrade


def test_wall_clock_limit_kills_a_kernel_that_ignores_interrupts(probe):
    root, release = probe
    stubborn = nbformat.from_dict(release)
    stubborn.cells[
        0
    ].source = (
        "import signal, time\n\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(600)"
    )
    hand_in(root, "stubborn", "probe", stubborn)
    # Honest students next to a faulty one are the faulty fixture's business.
    run = autograde(root, ["probe"], GradingSettings(submission_timeout=8, progress=False))[0]
    assert [(r.student, r.status) for r in run.records] == [("stubborn", "timeout")]
    assert "time limit" in run.records[0].message
    assert scores(root, "stubborn", "probe")["test_probe"].score == 0
    leftovers = []
    for process in psutil.process_iter():
        try:
            if str(root) in process.environ().get(JOB_TOKEN_ENV, ""):
                leftovers.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    assert leftovers == [], "the ignored kernel was killed with its nbgrader"
    logged = {r["student"]: r["status"] for r in json.loads((root / LOG_NAME).read_text())}
    assert logged == {"stubborn": "timeout"}


def test_collect_zip_fills_submitted_with_nbgraders_zip_collect(probe, tmp_path):
    import zipfile

    root, release = probe
    archive = tmp_path / "hand-in.zip"
    text = nbformat.writes(release)
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("ada_probe.ipynb", text)
        handle.writestr("downloads/grace/probe.ipynb", text)
        handle.writestr("__MACOSX/._ada_probe.ipynb", "junk")
        handle.writestr("notes.txt", "not a notebook")
    assert collect_zip(root, "probe", archive).collected == ["ada", "grace"]
    for student in ("ada", "grace"):
        assert notebook_path(root / "submitted" / student, "probe").is_file()
    not_zip = tmp_path / "not.zip"
    not_zip.write_text("hello")
    with pytest.raises(Exception, match="not a zip file"):
        collect_zip(root, "probe", not_zip)
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as handle:
        handle.writestr("notes.txt", "nothing")
    with pytest.raises(Exception, match="holds no notebook"):
        collect_zip(root, "probe", empty)


def test_a_second_attempt_after_a_dead_kernel_is_said_in_the_record(tmp_path):
    from autograder.grading.pipeline.autograde.cluster.dask_cluster import after_retry
    from autograder.grading.pipeline.autograde.job.spec import JobResult

    job = Job("ada", RECIPE, 1, str(tmp_path), None, None, None)
    died = JobResult(job, "kernel-died", "the kernel died", 3.0, None, {}, "first output")
    graded = JobResult(job, "graded", "", 5.0, None, {}, "second output")
    assert after_retry(graded, None) == graded
    recovered = after_retry(graded, died)
    assert recovered.status == "graded" and recovered.seconds == 8.0
    assert "died on the first attempt" in recovered.message
    assert "first output" in recovered.output and "second output" in recovered.output
    again = after_retry(
        dataclasses.replace(graded, status="kernel-died", message="the kernel died"), died
    )
    assert again.status == "kernel-died" and "twice" in again.message


# Each test cell fails if something of an earlier job in the same worker reached this one:
# its seed, a file it left in its folder, its memory limit, its cell timeout. No import of
# autograder (torch): the cells must run well within Ada's 2 s cell timeout.
LEAK_TESTS = {
    "test_seed": (
        "import os\nimport pathlib\nimport resource\nimport time\n\n"
        "student = pathlib.Path.cwd().parent.name\n"
        "assert os.environ['AUTOGRADER_SEED'] == {seeds!r}[student], 'seed'"
    ),
    # Ada's own file fails her this test; Grace must not see it.
    "test_file": "assert not pathlib.Path('../../../left-behind.txt').exists(), 'file'",
    "test_limit": (
        "expected = {{'ada': 3 * 2**30, 'grace': resource.RLIM_INFINITY}}[student]\n"
        "assert resource.getrlimit(resource.RLIMIT_AS)[0] == expected, 'memory limit'"
    ),
    "test_timeout": "time.sleep(6)  # Ada's cells time out after 2 s",
}
LEFT_BEHIND = "open('../../../left-behind.txt', 'w').write('from the first job')"


@pytest.fixture(scope="module")
def leak_course(tmp_path_factory):
    """Ada's and Grace's submissions of ``leak``; Ada's leaves a file in its job folder."""
    cells = [nbformat.v4.new_code_cell("pass")]
    seeds = {student: str(student_seed(student, "leak")) for student in ("ada", "grace")}
    tests = {name: source.format(seeds=seeds) for name, source in LEAK_TESTS.items()}
    cells += [graded_cell(name, source) for name, source in tests.items()]
    template = tiny_course(tmp_path_factory.mktemp("leak"), "leak", cells)
    root = copy_workspace(template, template.parent / "course")
    release = nbformat.read(notebook_path(root / "release", "leak"), 4)
    ada = nbformat.from_dict(release)
    ada.cells[0].source = LEFT_BEHIND
    hand_in(root, "ada", "leak", ada)
    hand_in(root, "grace", "leak", release)
    return root


def leak_specs(root, tmp_path):
    """Ada's job (memory limit, 2 s cells, threads) then Grace's (none of these)."""
    from autograder.grading.pipeline.autograde.jobs import build_spec, config_as_dict

    course = load_course(root)
    (tmp_path / "snapshot").mkdir()
    snapshot = snapshot_gradebook(course, tmp_path / "snapshot" / "gradebook.db")
    config = config_as_dict(course)
    # The tests look at the student's kernel (its seed, files, limits), which only test cells
    # run there show: kernel verdicts.
    seeds = {name: student_seed(name, "leak") for name in ("ada", "grace")}
    ada = Job("ada", "leak", seeds["ada"], "leak-ada", 2, 3 * 1024, None, verdicts="kernel")
    grace = Job("grace", "leak", seeds["grace"], "leak-grace", None, None, None, verdicts="kernel")
    # Grace's job sets no cell timeout at all, not even the course's: nbgrader's default
    # (30 s) applies, unless Ada's 2 s stayed behind.
    untimed = {**config, "Execute": {k: v for k, v in config["Execute"].items() if k != "timeout"}}
    return [
        build_spec(course, ada, config, snapshot, threads=1),
        build_spec(course, grace, untimed, snapshot, threads=None),
    ]


def test_nothing_of_a_job_reaches_the_next_one_in_the_same_worker(leak_course, tmp_path):
    import pickle

    from autograder.grading.pipeline.autograde.cluster.dask_cluster import grading_client
    from autograder.grading.pipeline.autograde.cluster.dask_worker import grade_payload

    first, second = leak_specs(leak_course, tmp_path)
    with grading_client(workers=1) as grading:
        client = grading.client
        (pid,) = client.run(os.getpid).values()
        ada, grace = (
            pickle.loads(client.submit(grade_payload, pickle.dumps(spec), 300, None).result())
            for spec in (first, second)
        )
        assert list(client.run(os.getpid).values()) == [pid], "one worker process graded both"
    assert (ada.status, grace.status) == ("timeout", "graded"), (ada.output, grace.output)
    ada_scores = {name: score for (_, name), (score, _) in ada.grades.grades.items()}
    grace_scores = {name: score for (_, name), (score, _) in grace.grades.grades.items()}
    assert ada_scores == {"test_seed": 1, "test_file": 0, "test_limit": 1, "test_timeout": 0}
    assert grace_scores == dict.fromkeys(ada_scores, 1), grace.output
    for trace in ("'ada'", "/ada/"):
        assert trace not in grace.output, "the first job's log went on into the second's"


def test_a_job_graded_in_process_leaves_the_process_as_it_was(leak_course, tmp_path):
    """Environment, log handlers and levels, stdout/stderr are put back; no file is left open
    (the first job may open what every later one reuses, such as zmq's context)."""
    import logging

    from autograder.grading.pipeline.autograde.job.grade_job import grade_job

    first, second = leak_specs(leak_course, tmp_path)
    loggers = [logging.getLogger(), logging.getLogger("traitlets")]

    def state():
        return (
            dict(os.environ),
            [(list(logger.handlers), logger.level) for logger in loggers],
            os.readlink("/proc/self/fd/1"),
            os.readlink("/proc/self/fd/2"),
        )

    before = state()
    assert grade_job(first, scratch=tmp_path).status == "timeout"
    assert state() == before
    open_files = sorted(os.listdir("/proc/self/fd"))
    assert grade_job(second, scratch=tmp_path).status == "graded"
    assert state() == before
    assert sorted(os.listdir("/proc/self/fd")) == open_files
    assert list(tmp_path.glob("autograde-job-*")) == [], "the job folder is removed"
