"""Does the one resolver of a course read its folders and gradebook URL as nbgrader does?"""

import os
import shutil
import sys
from pathlib import Path

import pytest
from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

from autograder.grading.course.course_root import (
    MAX_ID_LENGTH,
    AutogradeError,
    check_source,
    load_course,
    sqlite_file,
    submitted_students,
)
from autograder.grading.course.nbgrader_workspace import grading_environment, kernel_environment
from autograder.grading.pipeline.autograde.jobs import config_as_dict

POSTGRES = "postgresql+psycopg://grader:secret@/course?host=/run/postgresql"


def course_folder(folder: Path, *settings: str) -> Path:
    """A folder with an nbgrader_config.py holding ``settings`` (lines of ``c.X = Y``)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["c = get_config()  # noqa: F821", *settings]
    (folder / "nbgrader_config.py").write_text("\n".join(lines) + "\n")
    return folder


def as_nbgrader_runs_it(folder: Path, monkeypatch) -> CourseDirectory:
    """nbgrader's own CourseDirectory, made as ``nbgrader`` run in ``folder`` makes it."""
    monkeypatch.chdir(folder)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    return CourseDirectory(config=config)


def test_defaults_are_nbgraders(tmp_path):
    course = load_course(course_folder(tmp_path / "c"))
    root = (tmp_path / "c").resolve()
    assert course.root == root
    assert course.config == root / "nbgrader_config.py"
    assert (course.source, course.release, course.submitted) == (
        root / "source",
        root / "release",
        root / "submitted",
    )
    assert (course.autograded, course.feedback) == (root / "autograded", root / "feedback")
    assert course.db_url == f"sqlite:///{root / 'gradebook.db'}"


def test_custom_folders_and_relative_sqlite_match_nbgrader_in_the_folder(tmp_path, monkeypatch):
    folder = course_folder(
        tmp_path / "c",
        'c.CourseDirectory.source_directory = "instructor"',
        'c.CourseDirectory.release_directory = "handout"',
        'c.CourseDirectory.submitted_directory = "handins"',
        'c.CourseDirectory.autograded_directory = "graded"',
        'c.CourseDirectory.feedback_directory = "comments"',
        'c.CourseDirectory.db_url = "sqlite:///grades/course.db"',
    )
    monkeypatch.chdir(tmp_path)  # read from elsewhere: relative paths are the course's
    course = load_course(folder)
    nbgrader = as_nbgrader_runs_it(folder, monkeypatch)
    root = Path(nbgrader.root)
    assert course.root == root == folder.resolve()
    assert course.source == root / nbgrader.source_directory == root / "instructor"
    assert course.release == root / "handout"
    assert course.submitted == root / "handins"
    assert course.autograded == root / "graded"
    assert course.feedback == root / "comments"
    # SQLAlchemy would open the relative path from nbgrader's folder: the resolver says so.
    assert course.db_url == f"sqlite:///{folder.resolve() / 'grades' / 'course.db'}"
    assert course.sqlite_file == folder.resolve() / "grades" / "course.db"


def test_a_relative_root_and_the_default_gradebook_follow_it(tmp_path, monkeypatch):
    folder = course_folder(tmp_path / "c", 'c.CourseDirectory.root = "term1"')
    course = load_course(folder)
    nbgrader = as_nbgrader_runs_it(folder, monkeypatch)
    assert course.root == Path(nbgrader.root) == folder.resolve() / "term1"
    assert course.submitted == course.root / "submitted"
    assert course.db_url == nbgrader.db_url == f"sqlite:///{course.root / 'gradebook.db'}"
    assert course.workdir == folder.resolve()  # nbgrader still runs where the config is


def test_an_absolute_sqlite_path_is_kept(tmp_path):
    elsewhere = tmp_path / "shared" / "book.db"
    folder = course_folder(tmp_path / "c", f'c.CourseDirectory.db_url = "sqlite:///{elsewhere}"')
    course = load_course(folder)
    assert course.db_url == f"sqlite:///{elsewhere}"
    assert course.sqlite_file == elsewhere


def test_a_postgresql_url_is_accepted_as_written(tmp_path):
    folder = course_folder(tmp_path / "c", f'c.CourseDirectory.db_url = "{POSTGRES}"')
    course = load_course(folder)
    assert course.db_url == POSTGRES
    assert course.sqlite_file is None and sqlite_file(POSTGRES) is None
    # The jobs get the course's config without the URL (and so without its password).
    job_config = config_as_dict(course)
    assert "db_url" not in job_config["CourseDirectory"]
    assert "secret" not in repr(job_config) and "postgresql" not in repr(job_config)


def test_ids_longer_than_the_gradebook_columns_are_refused_up_front(tmp_path):
    folder = course_folder(tmp_path / "c")
    course = load_course(folder)
    (course.source / "a1").mkdir(parents=True)
    fits, too_long = "s" * MAX_ID_LENGTH, "x" * (MAX_ID_LENGTH + 22)
    for student in (fits, too_long):
        (course.submitted / student / "a1").mkdir(parents=True)
    with pytest.raises(AutogradeError, match="150 characters") as error:
        submitted_students(course, "a1")
    assert "student ids longer than 128" in str(error.value) and fits[:40] not in str(error.value)
    (course.submitted / too_long).rename(course.submitted / "short")
    assert submitted_students(course, "a1") == sorted([fits, "short"])
    (course.source / ("a" * 129)).mkdir()
    with pytest.raises(AutogradeError, match="assignment ids longer than 128"):
        check_source(course, "a" * 129)


def test_grading_workers_get_no_database_settings(monkeypatch):
    monkeypatch.setenv("PGPASSWORD", "secret")
    monkeypatch.setenv("PGHOST", "/run/postgresql")
    assert kernel_environment()["PGPASSWORD"] == "secret"  # nbgrader's commands need them
    assert not [name for name in grading_environment() if name.startswith("PG")]


@pytest.mark.parametrize(
    ("url", "words"),
    [("not a url", "is not a database URL"), ("sqlite://", "in-memory")],
)
def test_unusable_database_urls_are_refused(tmp_path, url, words):
    folder = course_folder(tmp_path / "c", f'c.CourseDirectory.db_url = "{url}"')
    with pytest.raises(AutogradeError, match=words):
        load_course(folder)


def test_a_folder_without_config_is_not_a_course(tmp_path):
    with pytest.raises(AutogradeError, match="no nbgrader_config.py"):
        load_course(tmp_path)


def test_loading_a_course_puts_this_environments_alembic_on_path(tmp_path, monkeypatch):
    # nbgrader runs `alembic` by name on the first open of an empty database.
    bin_dir = Path(sys.executable).parent
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    load_course(course_folder(tmp_path / "c"))
    assert os.environ["PATH"].split(os.pathsep)[0] == str(bin_dir)
    assert shutil.which("alembic") == str(bin_dir / "alembic")
    load_course(course_folder(tmp_path / "c"))
    assert os.environ["PATH"].count(str(bin_dir)) == 1, "added once"
