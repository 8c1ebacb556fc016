"""One job graded inside a worker process by nbgrader's Autograde converter, in a fresh
private folder outside the course, with a fresh kernel per notebook.

Everything a job changes in the worker is put back when it ends, so the next job starts as
the first did: the environment (the seed, the job token and JUPYTER_PATH reach the kernel
through it), the converter's log handler and level, the process's stdout/stderr (the
kernel's stderr is captured per job), and the folder. Config is built afresh for each job
and given to new converter objects; nbgrader's gradebooks are opened and closed by the
converter itself.
"""

import contextlib
import os
import shutil
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from autograder.checks.seed import SEED_ENV
from autograder.grading.course.autograd_packages import AUTOGRAD_PACKAGES
from autograder.grading.course.nbgrader_workspace import captured_log
from autograder.grading.pipeline.autograde.job.classify import classify_failure, classify_graded
from autograder.grading.pipeline.autograde.job.folder import (
    AUTOGRADED,
    SOURCE,
    SUBMITTED,
    JobFolder,
)
from autograder.grading.pipeline.autograde.job.folder_files import (
    read_files,
    remove_odd_entries,
    set_file_modes,
    write_files,
)
from autograder.grading.pipeline.autograde.job.gradebook import quiet_gradebook, read_grade_rows
from autograder.grading.pipeline.autograde.job.kernel_launch import (
    AUDIT_HOOK_FILE,
    SYSCALL_FILTER_FILE,
    write_kernelspec,
)
from autograder.grading.pipeline.autograde.job.sandbox import JobSandbox
from autograder.grading.pipeline.autograde.job.spec import JOB_TOKEN_ENV, JobOutcome, JobSpec
from autograder.grading.pipeline.integrity.runtime_record import read_record
from autograder.kernel.environment import (
    AUDIT_HOOK_ENV,
    NO_IMPORT_ENV,
    RECORD_ENV,
    SYSCALL_FILTER_ENV,
)

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def job_config(spec: JobSpec, folder: JobFolder, sandbox: JobSandbox | None = None):
    """The course's config pointed at the job folder, with the job's limits (and the
    sandboxed kernel's transport: no network inside, so unix sockets)."""
    from traitlets.config import Config

    config = Config(spec.config)
    directories = config.CourseDirectory
    directories.root = str(folder.root)
    directories.source_directory = SOURCE
    directories.submitted_directory = SUBMITTED
    directories.autograded_directory = AUTOGRADED
    directories.db_url = folder.db_url
    directories.assignment_id = spec.assignment
    directories.student_id = spec.student
    if spec.cell_timeout is not None:
        # Execute, not ExecutePreprocessor: the course config sets c.Execute.timeout.
        config.Execute.timeout = spec.cell_timeout
    # A graceful kernel shutdown costs over a second and changes no grade: the notebook
    # has been executed and saved by then.
    config.Execute.shutdown_kernel = "immediate"
    if spec.verdicts == "trusted":
        from autograder.grading.pipeline.verdicts.executor import trusted_preprocessors

        config.Autograde.autograde_preprocessors = trusted_preprocessors()
        # The channel's socket goes where a sandboxed kernel can reach it.
        config.TrustedExecute.socket_dir = str(sandbox.runtime if sandbox else folder.root)
        config.TrustedExecute.source_folder = str(folder.source)
        # Removed with the job folder, even when the worker grading it is killed.
        config.TrustedExecute.private_dir = str(folder.root)
    if sandbox is not None:
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = sandbox.ipc_address
        # Otherwise a temp file in this process's temp folder, which the kernel cannot see.
        config.KernelManager.connection_file = sandbox.connection_file
    return config


@contextlib.contextmanager
def job_environment(
    spec: JobSpec, jupyter_dir: Path, record: Path, sandboxed: bool = False
) -> Iterator[None]:
    """The kernel's environment for this job, put back as it was afterwards; ``record`` is
    where its audit hook writes the runtime record. With trusted verdicts an unsandboxed
    kernel refuses to import autograd libraries (a sandboxed one has none mounted)."""
    saved = dict(os.environ)
    try:
        if spec.verdicts == "trusted" and not sandboxed:
            os.environ[NO_IMPORT_ENV] = ",".join(AUTOGRAD_PACKAGES)
        os.environ[SEED_ENV] = str(spec.seed)
        os.environ[JOB_TOKEN_ENV] = spec.token
        os.environ[AUDIT_HOOK_ENV] = str(AUDIT_HOOK_FILE)
        os.environ[SYSCALL_FILTER_ENV] = str(SYSCALL_FILTER_FILE)
        os.environ[RECORD_ENV] = str(record)
        # The job's own kernelspec (its memory limit) comes before every installed one.
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            [str(jupyter_dir), *filter(None, [saved.get("JUPYTER_PATH")])]
        )
        # Fewer malloc arenas: each reserves 64 MiB of address space against the limit.
        os.environ.setdefault("MALLOC_ARENA_MAX", "2")
        if spec.threads:
            # N kernels at once each starting a BLAS thread per core would fight for cores.
            for name in THREAD_VARIABLES:
                os.environ.setdefault(name, str(spec.threads))
        os.environ.update(spec.extra_env)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def captured_output(path: Path) -> Iterator[None]:
    """Send this process's stdout and stderr (and so the kernel's) to ``path`` meanwhile."""
    saved = [os.dup(1), os.dup(2)]
    try:
        with path.open("wb") as target:
            os.dup2(target.fileno(), 1)
            os.dup2(target.fileno(), 2)
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


def job_autograde() -> type:
    """nbgrader's Autograde, whose last step (the graded folder's file modes) first removes
    the links and special files the kernel left, and never follows one."""
    from nbgrader.converters import Autograde

    class JobAutograde(Autograde):
        def set_permissions(self, assignment_id: str, student_id: str) -> None:
            folder = Path(self._format_dest(assignment_id, student_id))
            for entry in remove_odd_entries(folder):
                self.log.warning("Left out of the graded folder's files: %s", entry)
            set_file_modes(folder, int(str(self.permissions), 8))

    return JobAutograde


def run_converter(
    spec: JobSpec, folder: JobFolder, sandbox: JobSandbox | None = None
) -> tuple[bool, str]:
    """nbgrader's Autograde converter on the job folder: (grades saved, its log and error)."""
    from nbgrader.coursedir import CourseDirectory

    config = job_config(spec, folder, sandbox)
    converter = job_autograde()(coursedir=CourseDirectory(config=config), config=config)
    converter.force = True
    converter.create_student = True
    with captured_log(converter.log) as log, quiet_gradebook():
        try:
            converter.start()
        except BaseException as error:  # nbgrader raises on a dead kernel; report, go on
            if isinstance(error, KeyboardInterrupt):
                raise
            return False, log.getvalue() + traceback.format_exc()
    return True, log.getvalue()


def grade_job(spec: JobSpec, scratch: Path | None = None) -> JobOutcome:
    """Grade one submission in a fresh folder under ``scratch`` (a temp dir by default)."""
    started = time.perf_counter()
    folder = JobFolder.make(spec.student, spec.assignment, scratch)
    sandbox = None
    try:
        write_files(folder.source, spec.source)
        write_files(folder.submitted, spec.submission)
        folder.gradebook.write_bytes(spec.gradebook)
        if spec.sandbox is not None:
            sandbox = JobSandbox(folder.root, folder.autograded, spec.sandbox)
        write_kernelspec(folder.jupyter, spec.memory_limit_mb, sandbox)
        record = folder.runtime_record(sandboxed=sandbox is not None)
        environment = job_environment(spec, folder.jupyter, record, sandbox is not None)
        with environment, captured_output(folder.kernel_output):
            saved, log = run_converter(spec, folder, sandbox)
        output = log + folder.kernel_output.read_text(errors="replace")
        runtime = read_record(record)
        if not saved:
            status, message = classify_failure(1, output)
            seconds = time.perf_counter() - started
            return JobOutcome(status, message, seconds, None, {}, output, runtime)
        status, message = classify_graded(folder.autograded)
        grades = read_grade_rows(folder.db_url, spec.assignment, spec.student)
        files, left_out = read_files(folder.autograded)
        if left_out:
            output += "\nLeft out of the graded folder's files: " + ", ".join(left_out) + "\n"
        seconds = time.perf_counter() - started
        return JobOutcome(status, message, seconds, grades, files, output, runtime)
    finally:
        if sandbox is not None:
            sandbox.close()
        shutil.rmtree(folder.root, ignore_errors=True)
