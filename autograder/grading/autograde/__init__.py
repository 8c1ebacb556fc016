"""Parallel, fault-tolerant autograding around the real ``nbgrader autograde``.

nbgrader grades one submission after the other in one process against one sqlite
gradebook, and a student whose code loops forever, eats all memory or kills its kernel
stalls or aborts the run. Here each submission is graded by its own
``nbgrader autograde ASSIGNMENT --student S`` process in a private job folder: a config
that loads the course's config and points at the course's source/, a private gradebook
(the course's assignments and this student's own rows, nobody else's: the student's code
can read the job folder), and that one submission. Up to ``workers`` jobs run at once,
each with a memory limit (inherited by its kernel), nbgrader's per-cell timeout and an
optional wall-clock limit. This process alone writes the course gradebook: it copies each
finished job's automatic grades into it through ``nbgrader.api.Gradebook`` and moves the
job's ``autograded/S/A`` into the course. nbgrader does all executing and scoring, so
grades are those of a plain sequential ``nbgrader autograde``.

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

Modules: ``course`` (the course's folders, checks), ``plan`` (what to grade, resume),
``job_gradebook`` (each job's private gradebook), ``jobs`` (one nbgrader process),
``processes`` (finding and killing a job's processes), ``classify`` (statuses),
``merge`` (into the course gradebook), ``log`` (autograde_log.json), ``progress_bar``,
``zip_collect`` and ``run`` (``autograde`` itself).
"""

from autograder.grading.autograde.job_gradebook import snapshot_gradebook
from autograder.grading.autograde.log import (
    LOG_NAME,
    STATUSES,
    GradingRecord,
    GradingRun,
    latest_records,
    read_log_json,
)
from autograder.grading.autograde.merge import OUTPUT_LOGS
from autograder.grading.autograde.processes import JOB_TOKEN_ENV
from autograder.grading.autograde.run import DEFAULT_MEMORY_LIMIT_MB, autograde
from autograder.grading.autograde.zip_collect import collect_zip
from autograder.grading.course_root import (
    AutogradeError,
    Course,
    check_gradable,
    load_course,
    submitted_students,
)

__all__ = [
    "DEFAULT_MEMORY_LIMIT_MB",
    "JOB_TOKEN_ENV",
    "LOG_NAME",
    "OUTPUT_LOGS",
    "STATUSES",
    "AutogradeError",
    "Course",
    "GradingRecord",
    "GradingRun",
    "autograde",
    "check_gradable",
    "collect_zip",
    "latest_records",
    "load_course",
    "read_log_json",
    "snapshot_gradebook",
    "submitted_students",
]
