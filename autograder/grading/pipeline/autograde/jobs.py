"""A run's jobs described from the course: its config and files read once, and each job's
spec (its files as bytes, its private gradebook, its limits) built to send."""

from dataclasses import dataclass
from pathlib import Path

from autograder.grading.course.course_root import Course
from autograder.grading.pipeline.autograde.job.gradebook import job_gradebook_bytes
from autograder.grading.pipeline.autograde.job.spec import Job, JobSpec


def config_as_dict(course: Course) -> dict:
    """The course's nbgrader config as nested dicts, to send with every job, without the
    course database's URL (it may hold a password; a job has its own sqlite gradebook), with
    the course root's late policy."""
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.grading.pipeline.late_policy import policy_config

    loaded = PyFileConfigLoader(course.config.name, path=str(course.config.parent)).load_config()
    loaded.get("CourseDirectory", {}).pop("db_url", None)

    def plain(value):
        return {k: plain(v) for k, v in value.items()} if isinstance(value, dict) else value

    # the course root's late policy travels with the job (a worker may not see the root)
    return plain(loaded) | {"TermLatePolicy": policy_config(course.root / "term.toml")}


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` as relative path -> bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@dataclass(frozen=True)
class RunFiles:
    """The source and every submission of a run, read before any job starts: a kernel that
    overwrites another student's submission (or the source) on disk changes nothing this
    run grades."""

    source: dict[str, bytes]
    submissions: dict[str, dict[str, bytes]]

    @classmethod
    def read(cls, course: Course, assignment: str, students: list[str]) -> "RunFiles":
        """Read them now."""
        submissions = {}
        for student in students:
            try:
                submissions[student] = folder_files(course.submitted / student / assignment)
            except OSError:  # that student's job reports it (build_spec), the others go on
                continue
        return cls(folder_files(course.source / assignment), submissions)


def build_spec(
    course: Course,
    job: Job,
    config: dict,
    snapshot: Path,
    threads: int | None,
    files: "RunFiles | None" = None,
) -> JobSpec:
    """The job as plain data: the source and submission files, a private gradebook, limits.

    ``files``: the run's files as read when it started (else read now from the course)."""
    if files is not None:
        if job.student not in files.submissions:
            raise OSError(f"the submission of {job.student} could not be read")
        source, submission = files.source, files.submissions[job.student]
    else:
        source = folder_files(course.source / job.assignment)
        submission = folder_files(course.submitted / job.student / job.assignment)
    return JobSpec(
        student=job.student,
        assignment=job.assignment,
        seed=job.seed,
        token=job.token,
        config=config,
        source=source,
        submission=submission,
        gradebook=job_gradebook_bytes(course, snapshot, job.assignment, job.student),
        cell_timeout=job.cell_timeout,
        memory_limit_mb=job.memory_limit_mb,
        threads=threads,
        verdicts=job.verdicts,
        sandbox=job.sandbox,
    )
