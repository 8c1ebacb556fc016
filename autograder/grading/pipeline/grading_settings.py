"""How ``autograde`` grades (GradingSettings), in a module of its own: the command line
makes its autograde flags from these fields without importing nbgrader and Dask."""

from dataclasses import dataclass

DEFAULT_MEMORY_LIMIT_MB = 4096
# A submission still running after half an hour is killed (and graded 0, flagged): with
# nbgrader's per-cell timeout alone, a kernel that ignores interrupts would hold a worker
# for a cell timeout per cell.
DEFAULT_SUBMISSION_TIMEOUT = 1800.0
# Where graded test cells run: a trusted kernel (the default) or the student's own kernel
# (nbgrader's way, which the student's code can change).
VERDICTS = ("trusted", "kernel")
DEFAULT_VERDICTS = "trusted"


@dataclass(frozen=True)
class GradingSettings:
    """How ``autograde`` grades, every option in one place with its default: the command
    line's autograde flags are made from these fields (a new field needs its flag there)."""

    workers: int = 1  # processes of the local Dask cluster
    students: list[str] | None = None  # only these (None: every one handed in)
    force: bool = False  # regrade submissions graded before and unchanged since
    cell_timeout: int | None = None  # seconds per cell (None: the course config's)
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB  # per submission (None: none)
    submission_timeout: float | None = DEFAULT_SUBMISSION_TIMEOUT  # wall clock (0, None: none)
    progress: bool = True  # progress lines on stderr
    seed_salt: str = ""  # mixed into each student's seed
    # Where graded test cells run: a second, trusted kernel that reaches the student's
    # objects only through a narrow channel, or ("kernel") the student's own, as nbgrader.
    verdicts: str = DEFAULT_VERDICTS
    # Kernels in bubblewrap; where it cannot run, SandboxUnavailable before anything is
    # graded (False, or switched off through the environment: unsandboxed, one warning,
    # each record says so).
    sandbox: bool = True
    hide_packages: tuple[str, ...] = ()  # unimportable in the sandbox, beyond the defaults
    scheduler: str | None = None  # tcp://HOST:PORT of an existing cluster (None: local)
