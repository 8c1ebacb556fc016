"""Parallel, fault-tolerant autograding around the real ``nbgrader autograde``.

nbgrader grades one submission after the other in one process against one sqlite
gradebook, and a student whose code loops forever, eats all memory or kills its kernel
stalls or aborts the run. Here each submission is graded by its own
``nbgrader autograde ASSIGNMENT --student S`` process in a private job folder: a config
that loads the course's config and points at the course's source/, a private copy of the
gradebook, and that one submission. Up to ``workers`` jobs run at once, each with a memory
limit (inherited by its kernel), nbgrader's per-cell timeout and an optional wall-clock
limit. This process alone writes the course gradebook: it copies each finished job's
automatic grades into it through ``nbgrader.api.Gradebook`` and moves the job's
``autograded/S/A`` into the course. nbgrader does all executing and scoring, so grades are
those of a plain sequential ``nbgrader autograde``.

What nbgrader 0.9 does with faulty code, and what happens here:

- a cell runs past ``Execute.timeout``: nbclient interrupts the kernel (SIGINT) and records
  a ``CellTimeoutError`` output in that cell, then goes on with the next cells; the
  notebook is graded (the cell scores 0 if graded). Recorded here as ``timeout``.
- ``MemoryError`` under the memory limit: an ordinary error output, graded the same way;
  recorded as ``memory``.
- the kernel dies (``os._exit``, a segfault, the OOM killer): nbclient raises
  ``DeadKernelError``, nbgrader logs it, deletes that student's autograded folder, saves no
  grades and exits 1 (``Execute.execute_retries`` is declared in 0.9.6 but never used).
  Recorded as ``kernel-died``; the submission gets 0 on every cell and is flagged.
- the wall-clock limit kills the job (a kernel that ignores the interrupt, so every cell
  waits its whole timeout): ``timeout``, 0 on every cell, flagged.
"""

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
import psutil
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.utils import parse_utc
from sqlalchemy.exc import SAWarning

from autograder.grading_seed import SEED_ENV, student_seed
from autograder.nbgrader_workspace import kernel_environment, run_nbgrader

LOG_NAME = "autograde_log.json"
OUTPUT_LOGS = "autograde_logs"  # full nbgrader output of each job: root/autograde_logs/A/S.txt
STATUSES = ("graded", "timeout", "kernel-died", "memory", "error", "skipped")
DEFAULT_MEMORY_LIMIT_MB = 4096
JOB_TOKEN_ENV = "AUTOGRADER_JOB"

JOB_CONFIG = """\
c = get_config()  # noqa: F821
load_subconfig({course_config!r})  # noqa: F821
c.CourseDirectory.root = {job_root!r}
c.CourseDirectory.source_directory = {source_dir!r}
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.db_url = {db_url!r}
"""

# Sets the address-space limit, then becomes nbgrader: a limit set this way is inherited by
# the kernel nbgrader starts, and needs no preexec_fn (unsafe with the threads used here).
LIMITED_NBGRADER = """\
import os, resource, sys
limit = int(sys.argv[1])
if limit > 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.execv(sys.executable, [sys.executable, "-m", "nbgrader", *sys.argv[2:]])
"""


class AutogradeError(RuntimeError):
    """The course or assignment cannot be graded at all (not one student's failure)."""


@dataclass(frozen=True)
class GradingRecord:
    """One submission's grading, as written to autograde_log.json (these keys exactly)."""

    student: str
    assignment: str
    status: str  # one of STATUSES
    seconds: float
    seed: int
    message: str
    finished_at: str  # ISO 8601, UTC

    def as_dict(self) -> dict:
        """The record as a JSON object."""
        return asdict(self)


@dataclass
class GradingRun:
    """What one ``autograde`` call did: a record per submission and the wall time."""

    assignment: str
    records: list[GradingRecord] = field(default_factory=list)
    wall_seconds: float = 0.0

    def with_status(self, *statuses: str) -> list[GradingRecord]:
        """The records whose status is one of ``statuses``."""
        return [r for r in self.records if r.status in statuses]

    @property
    def failures(self) -> list[GradingRecord]:
        """Submissions that did not grade cleanly (neither graded nor skipped)."""
        return [r for r in self.records if r.status not in ("graded", "skipped")]


@dataclass(frozen=True)
class Course:
    """Where an nbgrader course keeps things, as its nbgrader_config.py says."""

    root: Path
    config: Path
    source: Path
    submitted: Path
    autograded: Path
    gradebook: Path  # the sqlite file

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook}"


def load_course(root: Path) -> Course:
    """Read the course folders and gradebook from ``root/nbgrader_config.py``."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    root = Path(root).resolve()
    config_path = root / "nbgrader_config.py"
    if not config_path.is_file():
        raise AutogradeError(f"{root} is not an nbgrader course: no nbgrader_config.py")
    config = PyFileConfigLoader(config_path.name, path=str(root)).load_config()
    coursedir = CourseDirectory(config=config)
    course_root = root
    if "root" in config.get("CourseDirectory", {}):
        course_root = (root / coursedir.root).resolve()
    db_url = coursedir.db_url
    if not db_url.startswith("sqlite:///"):
        raise AutogradeError(f"only sqlite gradebooks can be graded in parallel, not {db_url}")
    # A relative sqlite path is relative to where nbgrader runs: the course root.
    gradebook = course_root / db_url.removeprefix("sqlite:///")
    return Course(
        root=course_root,
        config=config_path,
        source=course_root / coursedir.source_directory,
        submitted=course_root / coursedir.submitted_directory,
        autograded=course_root / coursedir.autograded_directory,
        gradebook=gradebook,
    )


def submitted_students(course: Course, assignment: str) -> list[str]:
    """Students with a folder ``submitted/<student>/<assignment>/``, sorted."""
    if not course.submitted.is_dir():
        return []
    return sorted(p.parent.name for p in course.submitted.glob(f"*/{assignment}") if p.is_dir())


def check_gradable(course: Course, assignment: str) -> None:
    """Refuse, with what to do, an assignment that nbgrader could not grade."""
    if not (course.source / assignment).is_dir():
        raise AutogradeError(f"unknown assignment {assignment!r}: no {course.source / assignment}")
    if not course.gradebook.is_file():
        raise AutogradeError(
            f"no gradebook at {course.gradebook}: run nbgrader generate_assignment first"
        )
    with Gradebook(course.db_url) as gradebook:
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry as error:
            raise AutogradeError(
                f"assignment {assignment!r} is not in the gradebook: run "
                f"`nbgrader generate_assignment {assignment}` first"
            ) from error


# --- the log ---------------------------------------------------------------------------


def read_log(root: Path) -> list[dict]:
    """Every record of ``root/autograde_log.json``, oldest first ([] when there is none)."""
    path = Path(root) / LOG_NAME
    if not path.exists():
        return []
    records = json.loads(path.read_text())
    if not isinstance(records, list):
        raise AutogradeError(f"{path} is not a JSON list of records")
    return records


def latest_records(records: Iterable[dict]) -> dict[tuple[str, str], dict]:
    """(student, assignment) -> its latest record: later records replace earlier ones."""
    return {(r["student"], r["assignment"]): r for r in records}


def append_log(root: Path, new: list[GradingRecord]) -> None:
    """Add records to the log, replacing the file atomically so a crash cannot truncate it."""
    path = Path(root) / LOG_NAME
    records = read_log(root) + [r.as_dict() for r in new]
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(records, indent=1) + "\n")
    os.replace(temporary, path)


def utc_now() -> str:
    """Now as ISO 8601 with the UTC offset, the log's time format."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


# --- resume ----------------------------------------------------------------------------


def newest_change(folder: Path) -> float:
    """Latest modification time of ``folder`` and anything under it (epoch seconds)."""
    times = [folder.stat().st_mtime]
    times += [p.stat().st_mtime for p in folder.rglob("*")]
    return max(times)


def already_graded(course: Course, assignment: str, student: str, log: dict) -> bool:
    """Graded cleanly before, in the log and the gradebook, and unchanged on disk since."""
    record = log.get((student, assignment))
    if record is None or record.get("status") != "graded":
        return False
    finished = dt.datetime.fromisoformat(record["finished_at"]).timestamp()
    if newest_change(course.submitted / student / assignment) > finished:
        return False
    with Gradebook(course.db_url) as gradebook:
        try:
            gradebook.find_submission(assignment, student)
        except MissingEntry:
            return False
    return True


# --- one job ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One submission to grade in its own folder, and the limits it runs under."""

    student: str
    assignment: str
    folder: Path
    seed: int
    cell_timeout: int | None
    memory_limit_mb: int | None
    submission_timeout: float | None

    @property
    def token(self) -> str:
        """Marks the job's processes (in their environment): its folder is unique."""
        return str(self.folder)


@dataclass(frozen=True)
class JobResult:
    """How a job's nbgrader process ended and what the notebooks say about it."""

    job: Job
    status: str
    message: str
    seconds: float
    grades_saved: bool  # nbgrader finished and its gradebook holds this submission's grades
    output: str  # nbgrader's whole output


def prepare_job(course: Course, job: Job, gradebook_snapshot: Path) -> None:
    """Make the job's folder: config, a private gradebook, and the one submission."""
    job.folder.mkdir(parents=True)
    (job.folder / "nbgrader_config.py").write_text(
        JOB_CONFIG.format(
            course_config=str(course.config),
            job_root=str(job.folder),
            source_dir=str(course.source),
            db_url=f"sqlite:///{job.folder / 'gradebook.db'}",
        )
    )
    shutil.copyfile(gradebook_snapshot, job.folder / "gradebook.db")
    shutil.copytree(
        course.submitted / job.student / job.assignment,
        job.folder / "submitted" / job.student / job.assignment,
    )


def job_command(job: Job) -> list[str]:
    """``nbgrader autograde`` for the job's one student, under its memory limit."""
    limit = (job.memory_limit_mb or 0) * 2**20
    command = [sys.executable, "-c", LIMITED_NBGRADER, str(limit)]
    command += ["autograde", job.assignment, "--student", job.student]
    if job.cell_timeout is not None:
        # Execute, not ExecutePreprocessor: a course config's c.Execute.timeout would
        # otherwise win, being set on the more specific class.
        command.append(f"--Execute.timeout={job.cell_timeout}")
    return command


def job_environment(job: Job, threads: int | None) -> dict[str, str]:
    """The kernel's environment: this Python's kernel, the student's seed, thread counts."""
    env = kernel_environment()
    env[SEED_ENV] = str(job.seed)
    env[JOB_TOKEN_ENV] = job.token
    # Fewer malloc arenas: each reserves 64 MiB of address space against the memory limit.
    env.setdefault("MALLOC_ARENA_MAX", "2")
    if threads:
        # N kernels at once each starting a BLAS thread per core would fight for the cores.
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(name, str(threads))
    return env


def job_processes(token: str) -> list[psutil.Process]:
    """Processes started for one job, found by the token in their environment.

    The kernel runs in a session of its own and outlives an nbgrader that failed or was
    killed (it is then no longer nbgrader's child), so the tree alone does not find it.
    """
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(JOB_TOKEN_ENV) == token:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def kill_job_processes(token: str, process: subprocess.Popen | None = None) -> None:
    """Kill nbgrader (its whole process group) and every process left over from the job."""
    if process is not None and process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
    for leftover in job_processes(token):
        try:
            leftover.kill()
        except psutil.NoSuchProcess:
            pass


class RunningJobs:
    """The nbgrader processes running now, so an interrupted run can kill them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: dict[subprocess.Popen, str] = {}
        self.cancelled = threading.Event()

    def add(self, process: subprocess.Popen, token: str) -> None:
        with self._lock:
            self._processes[process] = token

    def discard(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.pop(process, None)

    def kill_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            processes = list(self._processes.items())
        for process, token in processes:
            kill_job_processes(token, process)


def run_job(job: Job, threads: int | None, running: RunningJobs) -> JobResult:
    """Run nbgrader for one submission and classify how it ended."""
    started = time.perf_counter()
    output_path = job.folder / "nbgrader-output.txt"
    with output_path.open("w") as output:
        if running.cancelled.is_set():
            return JobResult(job, "error", "cancelled", 0.0, False, "")
        process = subprocess.Popen(
            job_command(job),
            cwd=job.folder,
            env=job_environment(job, threads),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as one
        )
        running.add(process, job.token)
        killed = False
        try:
            process.wait(timeout=job.submission_timeout)
        except subprocess.TimeoutExpired:
            killed = True
        finally:
            # Also after a normal exit: a kernel that ignored its shutdown lingers on.
            kill_job_processes(job.token, process)
            running.discard(process)
    seconds = time.perf_counter() - started
    text = output_path.read_text(errors="replace")
    if killed:
        message = f"killed after the submission time limit of {job.submission_timeout:g} s"
        return JobResult(job, "timeout", message, seconds, False, text)
    if process.returncode != 0:
        status, message = classify_failure(process.returncode, text)
        return JobResult(job, status, message, seconds, False, text)
    status, message = classify_graded(job)
    return JobResult(job, status, message, seconds, True, text)


def classify_failure(returncode: int, output: str) -> tuple[str, str]:
    """Status and message of an nbgrader run that saved no grades, from its output."""
    if "DeadKernelError" in output or "Kernel died" in output:
        return "kernel-died", "the kernel died while running the notebook; no cell was graded"
    if "CellTimeoutError" in output or "UnresponsiveKernelError" in output:
        return "timeout", "a cell timed out and the kernel did not recover; no cell was graded"
    if "MemoryError" in output:
        return "memory", "out of memory outside a cell; no cell was graded"
    if returncode < 0:
        return "error", f"nbgrader was killed by {signal.Signals(-returncode).name}"
    lines = [line for line in output.splitlines() if "Error" in line or "error" in line]
    return "error", (lines[-1].strip() if lines else f"nbgrader exited with {returncode}")


def cell_errors(notebook_path: Path) -> dict[str, list[str]]:
    """Error name -> ids of the cells whose outputs show that error, in one notebook."""
    notebook = nbformat.read(notebook_path, as_version=4)
    errors: dict[str, list[str]] = {}
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                errors.setdefault(output.get("ename", ""), []).append(grade_id or f"#{index}")
    return errors


def classify_graded(job: Job) -> tuple[str, str]:
    """``graded``, or ``timeout``/``memory`` when a cell hit a limit (nbgrader graded on)."""
    errors: dict[str, list[str]] = {}
    folder = job.folder / "autograded" / job.student / job.assignment
    for notebook in sorted(folder.glob("*.ipynb")):
        for name, cells in cell_errors(notebook).items():
            errors.setdefault(name, []).extend(cells)
    if "CellTimeoutError" in errors:
        cells = ", ".join(errors["CellTimeoutError"])
        return "timeout", f"cell timeout in {cells}; graded, those cells as failed"
    if "MemoryError" in errors:
        cells = ", ".join(errors["MemoryError"])
        return "memory", f"MemoryError in {cells}; graded, those cells as failed"
    return "graded", ""


# --- into the course -------------------------------------------------------------------


@contextlib.contextmanager
def quiet_gradebook() -> Iterator[None]:
    """Silence the SQLAlchemy autoflush warnings that nbgrader's add_submission raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        yield


def copy_auto_grades(job_db_url: str, course: Course, assignment: str, student: str) -> None:
    """Copy what ``nbgrader autograde`` wrote for one submission into the course gradebook.

    Only the automatic fields: a manual grade given in formgrader meanwhile is kept.
    """
    with quiet_gradebook(), Gradebook(job_db_url) as job_book, Gradebook(course.db_url) as book:
        graded = job_book.find_submission(assignment, student)
        book.update_or_create_student(student)
        submission = book.update_or_create_submission(assignment, student)
        submission.timestamp = graded.timestamp
        for notebook in graded.notebooks:
            target = book.find_submission_notebook(notebook.name, assignment, student)
            target.late_submission_penalty = notebook.late_submission_penalty
            for grade in notebook.grades:
                into = book.find_grade(grade.name, notebook.name, assignment, student)
                into.auto_score = grade.auto_score
                into.needs_manual_grade = grade.needs_manual_grade
            for comment in notebook.comments:
                into = book.find_comment(comment.name, notebook.name, assignment, student)
                into.auto_comment = comment.auto_comment
        book.db.commit()


def submission_timestamp(course: Course, assignment: str, student: str) -> dt.datetime | None:
    """The submission's timestamp.txt, as nbgrader reads it (None without one)."""
    path = course.submitted / student / assignment / "timestamp.txt"
    text = path.read_text().strip() if path.is_file() else ""
    return parse_utc(text) if text else None


def record_zero_grades(course: Course, assignment: str, student: str) -> None:
    """Put an ungraded submission in the gradebook with 0 on every cell, flagged for review."""
    with quiet_gradebook(), Gradebook(course.db_url) as book:
        book.update_or_create_student(student)
        submission = book.update_or_create_submission(assignment, student)
        timestamp = submission_timestamp(course, assignment, student)
        if timestamp is not None:
            submission.timestamp = timestamp
        for notebook in submission.notebooks:
            notebook.flagged = True
            for grade in notebook.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
        book.db.commit()


def install_autograded(course: Course, result: JobResult) -> None:
    """Replace the course's autograded/S/A with the job's (or remove it, if none was made)."""
    job = result.job
    target = course.autograded / job.student / job.assignment
    if target.exists():
        shutil.rmtree(target)
    made = job.folder / "autograded" / job.student / job.assignment
    if result.grades_saved and made.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(made, target)


def keep_output(course: Course, result: JobResult) -> None:
    """Save nbgrader's output of the job for the instructor: autograde_logs/A/S.txt."""
    folder = course.root / OUTPUT_LOGS / result.job.assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{result.job.student}.txt").write_text(result.output)


def finish_job(course: Course, result: JobResult) -> GradingRecord:
    """Bring one finished job into the course; its record for the log."""
    job = result.job
    status, message = result.status, result.message
    try:
        if result.grades_saved:
            copy_auto_grades(f"sqlite:///{job.folder / 'gradebook.db'}", course, *_ids(job))
        else:
            record_zero_grades(course, *_ids(job))
        install_autograded(course, result)
        keep_output(course, result)
    except Exception as error:  # one broken job must not stop the run
        status, message = "error", f"could not record the grades: {error!r}"
    finally:
        shutil.rmtree(job.folder, ignore_errors=True)
    return GradingRecord(
        student=job.student,
        assignment=job.assignment,
        status=status,
        seconds=round(result.seconds, 2),
        seed=job.seed,
        message=message,
        finished_at=utc_now(),
    )


def _ids(job: Job) -> tuple[str, str]:
    return job.assignment, job.student


# --- progress --------------------------------------------------------------------------


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"


class Progress:
    """Submissions done/total, failures, elapsed time and ETA on stderr.

    On a terminal one line rewritten in place; otherwise (CI logs, files) a line per
    finished submission.
    """

    def __init__(self, total: int, label: str, enabled: bool = True, stream=None) -> None:
        self.total, self.label, self.enabled = total, label, enabled
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.done = self.failed = 0
        self.started = time.perf_counter()

    def line(self, latest: GradingRecord | None = None) -> str:
        """The progress line: counts, a bar on a terminal, elapsed and ETA."""
        elapsed = time.perf_counter() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else None
        parts = [f"{self.label}: {self.done}/{self.total} done", f"{self.failed} failed"]
        parts += [f"elapsed {_clock(elapsed)}", f"ETA {_clock(eta) if eta is not None else '?'}"]
        text = ", ".join(parts)
        if self.tty:
            filled = int(20 * self.done / self.total) if self.total else 20
            return f"[{'#' * filled}{'.' * (20 - filled)}] {text}"
        if latest is not None:
            text += f" ({latest.student}: {latest.status}, {latest.seconds:.1f} s)"
        return text

    def update(self, record: GradingRecord) -> None:
        """Count one finished submission and show the new line."""
        self.done += 1
        self.failed += record.status not in ("graded", "skipped")
        self.show(record)

    def show(self, latest: GradingRecord | None = None) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + self.line(latest) + "\x1b[K")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(self.line(latest) + "\n")
        self.stream.flush()


# --- the run ---------------------------------------------------------------------------


def snapshot_gradebook(course: Course, target: Path) -> Path:
    """A consistent copy of the course gradebook (sqlite's backup), for the jobs to copy."""
    source = sqlite3.connect(course.gradebook)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()
    return target


def threads_per_job(workers: int) -> int | None:
    """BLAS/OpenMP threads for each of ``workers`` parallel kernels (None: leave as is)."""
    if workers <= 1:
        return None
    return max(1, (os.cpu_count() or 1) // workers)


def skipped_record(student: str, assignment: str, salt: str) -> GradingRecord:
    return GradingRecord(
        student=student,
        assignment=assignment,
        status="skipped",
        seconds=0.0,
        seed=student_seed(student, assignment, salt),
        message="already graded and unchanged since (force=True regrades)",
        finished_at=utc_now(),
    )


def plan(
    course: Course, assignment: str, students: list[str] | None, force: bool
) -> tuple[list[str], list[str]]:
    """(students to grade, students skipped as already graded).

    Named students are always graded; otherwise those graded cleanly and unchanged since
    are skipped unless ``force``.
    """
    handed_in = submitted_students(course, assignment)
    if students is not None:
        missing = sorted(set(students) - set(handed_in))
        if missing:
            raise AutogradeError(f"no submission of {assignment} by {missing}")
        return sorted(set(students)), []
    if force:
        return handed_in, []
    log = latest_records(read_log(course.root))
    skipped = [s for s in handed_in if already_graded(course, assignment, s, log)]
    return [s for s in handed_in if s not in skipped], skipped


def autograde(
    root: Path,
    assignment: str,
    workers: int = 1,
    students: list[str] | None = None,
    force: bool = False,
    cell_timeout: int | None = None,
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
    submission_timeout: float | None = None,
    progress: bool = True,
    seed_salt: str = "",
) -> GradingRun:
    """Grade every submission of ``assignment`` under ``root`` with nbgrader, N at a time.

    Faulty submissions are recorded and graded 0 where nothing was saved; the others are
    unaffected. Records go to ``root/autograde_log.json`` (skips are returned, not logged).
    """
    started = time.perf_counter()
    course = load_course(Path(root))
    check_gradable(course, assignment)
    to_grade, skipped = plan(course, assignment, students, force)
    run = GradingRun(assignment, [skipped_record(s, assignment, seed_salt) for s in skipped])
    bar = Progress(len(to_grade), f"autograde {assignment}", enabled=progress)
    if progress and skipped:
        print(f"{len(skipped)} already graded, skipped (force regrades)", file=sys.stderr)
    if not to_grade:
        run.wall_seconds = time.perf_counter() - started
        return run
    jobs_root = Path(tempfile.mkdtemp(prefix=".autograde-jobs-", dir=course.root))
    try:
        snapshot = snapshot_gradebook(course, jobs_root / "snapshot.db")
        jobs = [
            Job(
                student=student,
                assignment=assignment,
                folder=jobs_root / f"{index:05d}",
                seed=student_seed(student, assignment, seed_salt),
                cell_timeout=cell_timeout,
                memory_limit_mb=memory_limit_mb,
                submission_timeout=submission_timeout,
            )
            for index, student in enumerate(to_grade)
        ]

        def record(result: JobResult) -> None:
            graded = finish_job(course, result)
            append_log(course.root, [graded])
            run.records.append(graded)
            bar.update(graded)

        bar.show()
        run_pool(jobs, max(1, workers), lambda job: prepare_job(course, job, snapshot), record)
    finally:
        shutil.rmtree(jobs_root, ignore_errors=True)
    run.wall_seconds = time.perf_counter() - started
    return run


def run_pool(
    jobs: list[Job],
    workers: int,
    prepare: Callable[[Job], None],
    record: Callable[[JobResult], None],
) -> None:
    """Run ``jobs`` ``workers`` at a time; ``record`` each result here, in this thread.

    Only this thread touches the course gradebook, so there is one writer. On an
    interrupt every running nbgrader and kernel is killed before the exception goes on.
    """
    running = RunningJobs()
    threads = threads_per_job(workers)
    pending = list(reversed(jobs))
    active: dict[Future, Job] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            while pending or active:
                while pending and len(active) < workers:
                    job = pending.pop()
                    prepare(job)
                    active[pool.submit(run_job, job, threads, running)] = job
                done, _ = wait(active, return_when=FIRST_COMPLETED)
                for future in done:
                    job = active.pop(future)
                    try:
                        result = future.result()
                    except Exception as error:  # a bug here, not in the student's code
                        result = JobResult(job, "error", repr(error), 0.0, False, "")
                    record(result)
        except BaseException:
            running.kill_all()
            raise


# --- zip collect -----------------------------------------------------------------------


def collector_regexp(assignment: str) -> str:
    """nbgrader's FileNameCollectorPlugin regexp for ``<student>_<assignment>.ipynb`` or
    ``<student>/<assignment>.ipynb`` anywhere in the zip; student ids never start with a
    dot (macOS adds ``__MACOSX/._name`` copies)."""
    return rf"^.*/(?P<student_id>[^/.][^/]*?)[_/](?P<file_id>{re.escape(assignment)}\.ipynb)$"


def students_in_zip(zip_path: Path, assignment: str) -> list[str]:
    """The students whose notebooks for ``assignment`` the zip holds, checked before collecting."""
    if not zip_path.is_file():
        raise AutogradeError(f"no zip file at {zip_path}")
    if not zipfile.is_zipfile(zip_path):
        raise AutogradeError(f"{zip_path} is not a zip file")
    pattern = re.compile(collector_regexp(assignment))
    with zipfile.ZipFile(zip_path) as archive:
        matches = [pattern.match("/" + name) for name in archive.namelist()]
    students = sorted({m["student_id"] for m in matches if m})
    if not students:
        raise AutogradeError(
            f"{zip_path} holds no notebook named <student>_{assignment}.ipynb "
            f"or <student>/{assignment}.ipynb"
        )
    return students


def collect_zip(root: Path, assignment: str, zip_path: Path) -> list[str]:
    """Fill ``submitted/`` from a zip of notebooks with nbgrader's ``zip_collect``.

    Returns the students collected; their earlier submissions of ``assignment`` are replaced.
    """
    course = load_course(Path(root))
    if not (course.source / assignment).is_dir():
        raise AutogradeError(f"unknown assignment {assignment!r}: no {course.source / assignment}")
    zip_path = Path(zip_path).resolve()
    students = students_in_zip(zip_path, assignment)
    # A private downloaded/ folder (zip_collect wants it inside the course root), so zips
    # collected before are not extracted again.
    downloaded = Path(tempfile.mkdtemp(prefix=".zip-collect-", dir=course.root))
    try:
        archive = downloaded / assignment / "archive"
        archive.mkdir(parents=True)
        shutil.copyfile(zip_path, archive / zip_path.name)
        run_nbgrader(
            course.root,
            "zip_collect",
            assignment,
            "--force",
            f"--ZipCollectApp.downloaded_directory={downloaded.name}",
            f"--FileNameCollectorPlugin.named_regexp={collector_regexp(assignment)}",
        )
    finally:
        shutil.rmtree(downloaded, ignore_errors=True)
    return [s for s in students if (course.submitted / s / assignment).is_dir()]
