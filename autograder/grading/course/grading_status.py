"""How a submission's grading ended: the ``status`` of each autograde_log.json record, one
name each. A StrEnum member is its own string, so the log's JSON and the reports that read
it back as plain strings are unchanged, while a misspelt status is an AttributeError
instead of a new status."""

from enum import StrEnum


class Status(StrEnum):
    """Every status a grading record can have."""

    GRADED = "graded"
    # A cell ran past the cell timeout, or the job past the submission's time limit.
    TIMEOUT = "timeout"
    # The kernel died twice, or the worker died on every attempt: 0 on every cell.
    KERNEL_DIED = "kernel-died"
    MEMORY = "memory"
    # A file nbgrader cannot grade (not a notebook, unknown grade ids): the student's, 0.
    INVALID_NOTEBOOK = "invalid-notebook"
    # A fault of the grading itself (or a run given up on): 0 on every cell.
    ERROR = "error"
    # Graded cleanly before and unchanged since: returned, never logged.
    SKIPPED = "skipped"
    # A hand-in folder whose name nbgrader cannot take as an id (spaces around it, a
    # pattern): not graded until the instructor renames it.
    BAD_ID = "bad-id"
