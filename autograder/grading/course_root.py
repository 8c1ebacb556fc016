"""The nbgrader course being graded: its folders and gradebook, read from its own config,
and the checks that refuse an assignment nbgrader could not grade."""

from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry


class AutogradeError(RuntimeError):
    """The course or assignment cannot be graded at all (not one student's failure)."""


@dataclass(frozen=True)
class Course:
    """Where an nbgrader course keeps things, as its nbgrader_config.py says."""

    root: Path
    config: Path
    source: Path
    release: Path  # what students were given: the integrity scan compares against it
    submitted: Path
    autograded: Path
    gradebook: Path  # the sqlite file

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook}"


def load_course(root: Path) -> Course:
    """Read the course folders and gradebook from ``root/nbgrader_config.py``."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    root = Path(root).resolve()
    config_path = root / "nbgrader_config.py"
    if not config_path.is_file():
        raise AutogradeError(f"{root} is not an nbgrader course: no nbgrader_config.py")
    config = PyFileConfigLoader(config_path.name, path=str(root)).load_config()
    coursedir = CourseDirectory(config=config)
    course_root = root
    if "root" in config.get("CourseDirectory", {}):
        course_root = (root / coursedir.root).resolve()
    db_url = coursedir.db_url
    if not db_url.startswith("sqlite:///"):
        raise AutogradeError(f"only sqlite gradebooks can be graded in parallel, not {db_url}")
    # A relative sqlite path is relative to where nbgrader runs: the course root.
    gradebook = course_root / db_url.removeprefix("sqlite:///")
    return Course(
        root=course_root,
        config=config_path,
        source=course_root / coursedir.source_directory,
        release=course_root / coursedir.release_directory,
        submitted=course_root / coursedir.submitted_directory,
        autograded=course_root / coursedir.autograded_directory,
        gradebook=gradebook,
    )


def submitted_students(course: Course, assignment: str) -> list[str]:
    """Students with a folder ``submitted/<student>/<assignment>/``, sorted."""
    if not course.submitted.is_dir():
        return []
    return sorted(p.parent.name for p in course.submitted.glob(f"*/{assignment}") if p.is_dir())


def check_source(course: Course, assignment: str) -> None:
    """Refuse an assignment without a source folder."""
    if not (course.source / assignment).is_dir():
        raise AutogradeError(f"unknown assignment {assignment!r}: no {course.source / assignment}")


def check_gradable(course: Course, assignment: str) -> None:
    """Refuse, with what to do, an assignment that nbgrader could not grade."""
    check_source(course, assignment)
    if not course.gradebook.is_file():
        raise AutogradeError(
            f"no gradebook at {course.gradebook}: run nbgrader generate_assignment first"
        )
    with Gradebook(course.db_url) as gradebook:
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry as error:
            raise AutogradeError(
                f"assignment {assignment!r} is not in the gradebook: run "
                f"`nbgrader generate_assignment {assignment}` first"
            ) from error
