"""Filling ``submitted/`` from a zip of notebooks (an LMS download) with nbgrader's
``zip_collect``, checking first that the zip holds notebooks of the assignment."""

import re
import shutil
import tempfile
import zipfile
from pathlib import Path

from autograder.grading.course_root import AutogradeError, check_ids, check_source, load_course
from autograder.grading.nbgrader_workspace import run_nbgrader


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
    check_ids("student", students)
    return students


def collect_zip(root: Path, assignment: str, zip_path: Path) -> list[str]:
    """Fill ``submitted/`` from a zip of notebooks with nbgrader's ``zip_collect``.

    Returns the students collected; their earlier submissions of ``assignment`` are replaced.
    """
    course = load_course(Path(root))
    check_source(course, assignment)
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
            course.workdir,
            "zip_collect",
            assignment,
            "--force",
            f"--ZipCollectApp.downloaded_directory={downloaded.name}",
            f"--FileNameCollectorPlugin.named_regexp={collector_regexp(assignment)}",
        )
    finally:
        shutil.rmtree(downloaded, ignore_errors=True)
    return [s for s in students if (course.submitted / s / assignment).is_dir()]
