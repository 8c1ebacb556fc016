"""A job's folder, laid out in one place: where grading one submission puts the source, the
submission, nbgrader's autograded output, the private gradebook, the job's kernelspec, the
kernel's output and its runtime record. Made once per job from its root and handed down."""

import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.course.owned_temp import owned_temp_folder
from autograder.grading.pipeline.integrity.runtime_record import (
    RECORD_NAME,
    RuntimeRecord,
    read_record,
)

PREFIX = "autograde-job-"
# nbgrader's CourseDirectory folders under the root, as the job's config names them.
SOURCE, SUBMITTED, AUTOGRADED = "source", "submitted", "autograded"
JOB_GRADEBOOK_NAME = "gradebook.db"  # the job's private gradebook
KERNEL_RUNTIME = "kernel-runtime"  # a sandboxed kernel's connection file and sockets


@dataclass(frozen=True)
class JobFolder:
    """The folder one job grades ``student``'s ``assignment`` in, and each thing's place."""

    root: Path
    student: str
    assignment: str

    @classmethod
    def make(cls, student: str, assignment: str, scratch: Path | None = None) -> "JobFolder":
        """A fresh job folder under ``scratch`` (a temp folder of this process's by default).

        In a run's scratch folder (removed by the grading process) the name stays short: the
        channel's socket path in it must fit a unix socket address (108 bytes)."""
        if scratch is None:
            root = owned_temp_folder(PREFIX)
        else:
            root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=scratch))
        return cls(root, student, assignment)

    @property
    def source(self) -> Path:
        """The assignment's source notebooks."""
        return self.root / SOURCE / self.assignment

    @property
    def submitted(self) -> Path:
        """The student's submission, as handed in."""
        return self.root / SUBMITTED / self.student / self.assignment

    @property
    def autograded(self) -> Path:
        """What nbgrader writes: the graded notebooks, and the kernel's working folder."""
        return self.root / AUTOGRADED / self.student / self.assignment

    @property
    def gradebook(self) -> Path:
        """The job's private sqlite gradebook."""
        return self.root / JOB_GRADEBOOK_NAME

    @property
    def db_url(self) -> str:
        """The private gradebook as nbgrader's ``db_url``."""
        return f"sqlite:///{self.gradebook}"

    @property
    def jupyter(self) -> Path:
        """The job's Jupyter data folder: its kernelspec, found first through JUPYTER_PATH."""
        return self.root / ".jupyter"

    @property
    def kernel_output(self) -> Path:
        """Where this process's stdout and stderr (and so the kernel's) go meanwhile."""
        return self.root / "kernel-output.txt"

    @property
    def kernel_runtime(self) -> Path:
        """A sandboxed kernel's connection file and sockets (resolved: bound by that path)."""
        return (self.root / KERNEL_RUNTIME).resolve()

    def runtime_record(self, sandboxed: bool) -> Path:
        """Where the kernel's audit hook writes the runtime record: beside a sandboxed
        kernel's sockets (a folder it can write), else in the root."""
        return (self.kernel_runtime if sandboxed else self.root) / RECORD_NAME


def salvaged_record(scratch: Path | None, student: str) -> RuntimeRecord | None:
    """The runtime record a killed worker left in ``student``'s job folder under the run's
    scratch folder (removed at the end of the run), or None when there is none."""
    if scratch is None:
        return None
    roots = [p.parent.parent for p in scratch.glob(f"{PREFIX}*/{SUBMITTED}/{student}")]
    # Either place a job's kernel writes it: the root, or beside a sandboxed kernel's sockets.
    places = [root / where / RECORD_NAME for root in roots for where in (".", KERNEL_RUNTIME)]
    records = [path for path in places if path.is_file()]
    if not records:
        return None
    return read_record(max(records, key=lambda path: path.stat().st_mtime))
