"""Filling ``submitted/`` from a zip of notebooks (an LMS download) with nbgrader's
``zip_collect``, fed only what ``zip_vetting`` read safely from the download.

nbgrader never opens the download: each collectable student's notebook is written, by this
process and under the student's id, into a private folder laid out as
``<student>/<assignment>.ipynb``, and ``zip_collect`` files that into ``submitted/`` as
usual. Uploads refused by the vetting are printed and recorded in ``collect_log.json``.
"""

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.course.course_root import Course, as_course, check_source
from autograder.grading.course.json_records import append_records, utc_now
from autograder.grading.course.nbgrader_workspace import run_nbgrader
from autograder.grading.pipeline.autograde.intake.zip_vetting import Refusal, vet_download

COLLECT_LOG_NAME = "collect_log.json"


@dataclass
class Collection:
    """What one collection did: the students filed in ``submitted/``, the uploads refused."""

    collected: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)


def collector_regexp(assignment: str) -> str:
    """nbgrader's FileNameCollectorPlugin regexp for the private layout written here,
    ``<student>/<assignment>.ipynb``: the student is the notebook's folder, nothing else."""
    return rf"^.*/(?P<student_id>[^/]+)/(?P<file_id>{re.escape(assignment)}\.ipynb)$"


def write_private(path: Path, content: bytes) -> None:
    """Write a new file readable by all, writable by its owner only, whatever the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(descriptor, "wb") as file:
        os.fchmod(file.fileno(), 0o644)
        file.write(content)


def collect_zip(root: Course | Path, assignment: str, zip_path: Path) -> Collection:
    """Fill ``submitted/`` from an LMS zip with nbgrader's ``zip_collect``, after vetting it.

    Collected students' earlier submissions of ``assignment`` are replaced; a refused
    student's is left as it was. AutogradeError when the zip itself is unreadable."""
    course = as_course(root)
    check_source(course, assignment)
    zip_path = Path(zip_path).resolve()
    vetting = vet_download(zip_path, assignment)
    if vetting.notebooks:
        # A private downloaded/ folder (zip_collect wants it inside the course root), so
        # zips collected before are not collected again.
        downloaded = Path(tempfile.mkdtemp(prefix=".zip-collect-", dir=course.root))
        try:
            archive = downloaded / assignment / "archive"
            for student, content in vetting.notebooks.items():
                write_private(archive / student / f"{assignment}.ipynb", content)
            run_nbgrader(
                course.workdir,
                "zip_collect",
                assignment,
                "--force",
                f"--ZipCollectApp.downloaded_directory={downloaded.name}",
                f"--FileNameCollectorPlugin.named_regexp={collector_regexp(assignment)}",
            )
        finally:
            shutil.rmtree(downloaded, ignore_errors=True)
    filed = course.submitted
    collected = [s for s in sorted(vetting.notebooks) if (filed / s / assignment).is_dir()]
    record_collection(course.root, assignment, zip_path, collected, vetting.refused)
    return Collection(collected, vetting.refused)


def record_collection(
    root: Path, assignment: str, zip_path: Path, collected: list[str], refused: list[Refusal]
) -> None:
    """Append each student's collection outcome to ``collect_log.json`` (one record each)."""
    now = utc_now()
    common = {"assignment": assignment, "zip": str(zip_path), "finished_at": now}
    records = [{"student": s, "status": "collected", "member": "", "reason": ""} for s in collected]
    for refusal in refused:
        status = "invalid-upload" if refusal.student else "ignored"
        records.append(
            {
                "student": refusal.student,
                "status": status,
                "member": refusal.member,
                "reason": refusal.reason,
            }
        )
    append_records(Path(root) / COLLECT_LOG_NAME, [record | common for record in records])
