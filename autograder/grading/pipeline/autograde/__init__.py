"""Parallel, fault-tolerant autograding with nbgrader's own Autograde converter.

nbgrader grades one submission after the other in one process against one sqlite
gradebook, and a student whose code loops forever, eats all memory or kills its kernel
stalls or aborts the run. Here the submissions are graded as jobs on a Dask cluster: by
default a local one of ``workers`` processes, started and stopped by the run, or an existing
one of any number of machines (``scheduler``). Each worker process imports nbgrader
once. A job is plain data (``job.spec``), pickled to bytes: the submission's and the
source's files, the course's config, and a private gradebook (the course's
assignments and this student's own rows, nobody else's: the student's code can read the
job folder). The worker writes it into a fresh folder outside the course root, runs
nbgrader's Autograde converter there (a fresh kernel per notebook, under the student's
seed, a memory limit set in the kernel's own launch and nbgrader's per-cell timeout), and
sends back the grade rows, the autograded files and the log; nothing of a job stays in
the worker; a job that overruns the per-submission wall-clock limit has its kernel killed
by the worker. This process alone writes the course gradebook, copying each job's automatic
grades into it through ``nbgrader.api.Gradebook``, each (student, assignment) once (Dask
runs a task at least once: a job whose worker died is run again elsewhere). nbgrader does
all executing and scoring, so grades are those of a plain sequential ``nbgrader
autograde``.

What nbgrader 0.9 does with faulty code, and what happens here:

- a cell runs past ``Execute.timeout``: nbclient interrupts the kernel (SIGINT) and records
  a ``CellTimeoutError`` output in that cell, then goes on with the next cells; the
  notebook is graded (the cell scores 0 if graded). Recorded here as ``timeout``.
- ``MemoryError`` under the memory limit: an ordinary error output, graded the same way;
  recorded as ``memory``.
- the kernel dies (``os._exit``, a segfault, the OOM killer): nbclient raises
  ``DeadKernelError``, nbgrader logs it, deletes that student's autograded folder and saves
  no grades (``Execute.execute_retries`` is declared in 0.9.6 but never used). Graded once
  more; if it dies again, recorded as ``kernel-died``, 0 on every cell and flagged. A
  worker process that dies is restarted by Dask and its job run elsewhere; a job that
  kills every worker it runs on ends as Dask's ``KilledWorker``: ``kernel-died`` too.
- a file nbgrader cannot grade (not JSON, not a notebook, grade ids it does not know):
  nbgrader fails the whole submission with its own exception. Found before the job is
  sent (``intake.notebook_check``) and recorded as ``invalid-notebook``, 0 on every cell, with
  the reason; a notebook whose nbgrader metadata was stripped is restored and graded.
- the wall-clock limit kills the job's kernel (a kernel that ignores the interrupt, so
  every cell waits its whole timeout): ``timeout``, 0 on every cell, flagged.

The rooms: ``job/`` is one submission on the worker's side (its spec, folder, private
gradebook, sandboxed kernel and nbgrader's run), ``cluster/`` where jobs run (local or
Dask, and the processes they leave), ``intake/`` what comes in before grading (LMS zips,
hand-in times, files nbgrader cannot grade); the run itself (``autograde`` and what it
plans, merges and logs) is this package's own modules. Each room imports only those
below it (``tests/test_layout.py``).
"""

from autograder.grading.course.course_root import (
    AutogradeError,
    Course,
    check_gradable,
    load_course,
    submitted_students,
)
from autograder.grading.pipeline.autograde.intake.zip_collect import collect_zip
from autograder.grading.pipeline.autograde.job.gradebook import snapshot_gradebook
from autograder.grading.pipeline.autograde.job.spec import JOB_TOKEN_ENV
from autograder.grading.pipeline.autograde.log import (
    LOG_NAME,
    STATUSES,
    GradingRecord,
    GradingRun,
    latest_records,
    read_log_json,
)
from autograder.grading.pipeline.autograde.merge import OUTPUT_LOGS
from autograder.grading.pipeline.autograde.run import autograde
from autograder.grading.pipeline.grading_settings import (
    DEFAULT_MEMORY_LIMIT_MB,
    DEFAULT_SUBMISSION_TIMEOUT,
    GradingSettings,
)

__all__ = [
    "DEFAULT_MEMORY_LIMIT_MB",
    "DEFAULT_SUBMISSION_TIMEOUT",
    "JOB_TOKEN_ENV",
    "LOG_NAME",
    "OUTPUT_LOGS",
    "STATUSES",
    "AutogradeError",
    "Course",
    "GradingRecord",
    "GradingRun",
    "autograde",
    "GradingSettings",
    "check_gradable",
    "collect_zip",
    "latest_records",
    "load_course",
    "read_log_json",
    "snapshot_gradebook",
    "submitted_students",
]
