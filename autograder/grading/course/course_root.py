"""The nbgrader course being graded: its folders and gradebook URL, resolved from its own
config by nbgrader's CourseDirectory, and the checks that refuse an assignment nbgrader
could not grade. Every grading command finds the course's folders and database here."""

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

CONFIG_NAME = "nbgrader_config.py"
# Files the grading tools keep at the course root, named here once for all that read them.
FLAGS_NAME = "integrity.json"  # the integrity scan's flags (integrity.record)
LOG_NAME = "autograde_log.json"  # one record per graded submission (autograde.log)
# nbgrader's gradebook keeps ids in VARCHAR(128) columns: PostgreSQL refuses a longer one in
# the middle of grading, where sqlite would store it; both are refused before anything runs.
MAX_ID_LENGTH = 128

if TYPE_CHECKING:
    from traitlets.config import Config


class AutogradeError(RuntimeError):
    """The course or assignment cannot be graded at all (not one student's failure)."""


@dataclass(frozen=True)
class Course:
    """Where an nbgrader course keeps things, as its nbgrader_config.py says.

    Relative paths in the config (``CourseDirectory.root``, a relative sqlite path) are
    taken from the config's folder, where nbgrader runs (``workdir``), as nbgrader does.
    The config as loaded travels with the course (``loaded_config``), so that whoever is
    handed a Course runs nbgrader in this process without reading the config again.
    """

    root: Path  # CourseDirectory.root
    config: Path  # the nbgrader_config.py read
    source: Path
    release: Path  # what students were given: the integrity scan compares against it
    submitted: Path
    autograded: Path
    feedback: Path
    db_url: str  # the gradebook; a sqlite path is made absolute, other URLs kept as written
    loaded_config: "Config" = field(compare=False, repr=False)  # nbgrader_config's answer

    @property
    def workdir(self) -> Path:
        """The folder nbgrader commands run in, so that they read this config."""
        return self.config.parent

    @property
    def sqlite_file(self) -> Path | None:
        """The gradebook's file when it is a sqlite database, else None."""
        return sqlite_file(self.db_url)


def sqlite_file(db_url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL (None for other databases or in-memory sqlite)."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def shown_url(db_url: str) -> str:
    """The URL fit for a message: any password replaced by ***."""
    return make_url(db_url).render_as_string(hide_password=True)


def absolute_db_url(db_url: str, folder: Path) -> str:
    """``db_url`` with a relative sqlite path made absolute from ``folder``; others as is.

    SQLAlchemy takes a relative sqlite path from the current folder, which is the course
    folder when nbgrader runs there, and anywhere at all in this process.
    """
    try:
        path = sqlite_file(db_url)
    except ArgumentError as error:
        raise AutogradeError(f"CourseDirectory.db_url {db_url!r} is not a database URL") from error
    if make_url(db_url).get_backend_name() == "sqlite" and path is None:
        raise AutogradeError("an in-memory sqlite gradebook would be lost after every command")
    if path is None or path.is_absolute():
        return db_url
    head, _, rest = db_url.partition(":///")
    query = rest.partition("?")[2]
    return f"{head}:///{(folder / path).resolve()}" + (f"?{query}" if query else "")


GLOB_CHARACTERS = ("*", "?", "[")


def _is_pattern(name: str) -> bool:
    return any(c in name for c in GLOB_CHARACTERS)


def _is_padded(name: str) -> bool:
    return name != name.strip()


def _is_too_long(name: str) -> bool:
    return len(name) > MAX_ID_LENGTH


def id_problem(name: str) -> str | None:
    """Why nbgrader cannot grade under the id ``name``, with what to do (None: it can)."""
    if _is_pattern(name):
        return (
            f"its id has {', '.join(GLOB_CHARACTERS)}, which nbgrader reads as a pattern "
            "matching other ids: rename its folder without them"
        )
    if _is_padded(name):
        return (
            "its id has leading or trailing spaces, which nbgrader cannot grade: rename its "
            "folder without the spaces"
        )
    if _is_too_long(name):
        return f"its id is longer than the gradebook's {MAX_ID_LENGTH} characters: rename its folder"
    return None


def check_ids(kind: str, ids: Iterable[str]) -> None:
    """Refuse ids longer than the gradebook's columns hold, with spaces around them
    (nbgrader finds no notebook for such an id) or with characters nbgrader's folder
    search reads as a pattern (one id would name others), naming each (shortened)."""
    ids = list(ids)
    patterns = sorted(filter(_is_pattern, ids))
    if patterns:
        shown = ", ".join(repr(i[:40]) for i in patterns)
        raise AutogradeError(
            f"{kind} ids with {', '.join(GLOB_CHARACTERS)}, which nbgrader reads as patterns "
            f"matching other ids: {shown}; rename them (their folders) without those first"
        )
    padded = sorted(filter(_is_padded, ids))
    if padded:
        shown = ", ".join(repr(i[:40]) for i in padded)
        raise AutogradeError(
            f"{kind} ids with leading or trailing spaces, which nbgrader cannot grade: "
            f"{shown}; rename them (their folders) without the spaces first"
        )
    too_long = sorted(filter(_is_too_long, ids))
    if too_long:
        shown = ", ".join(f"{i[:40]!r}... ({len(i)} characters)" for i in too_long)
        raise AutogradeError(
            f"{kind} ids longer than {MAX_ID_LENGTH} characters do not fit nbgrader's "
            f"gradebook: {shown}; rename them first"
        )


def tools_on_path() -> None:
    """Put this Python's bin folder first on PATH, for nbgrader run from here.

    nbgrader runs ``alembic`` by name to upgrade a gradebook of an older nbgrader (and, in
    a process without ``read_schema_head_in_process``, for every new gradebook); this
    environment's is the right one, also when ``autograd-course`` was started without
    activating the environment.
    """
    bin_dir = str(Path(sys.executable).parent)
    folders = os.environ.get("PATH", "").split(os.pathsep)
    if folders[:1] != [bin_dir]:
        os.environ["PATH"] = os.pathsep.join([bin_dir, *filter(None, folders)])


def nbgrader_config(folder: Path) -> "Config":
    """The config nbgrader would read in ``folder``, its course root made absolute.

    CourseDirectory would take a missing or relative root from this process's current
    folder: it gets the one nbgrader would run in, so commands run in-process see the course
    as ``nbgrader`` started in ``folder`` would.
    """
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.grading.course.schema_head import read_schema_head_in_process

    tools_on_path()
    read_schema_head_in_process()
    folder = Path(folder).resolve()
    if not (folder / CONFIG_NAME).is_file():
        raise AutogradeError(f"{folder} is not an nbgrader course: no {CONFIG_NAME}")
    config = PyFileConfigLoader(CONFIG_NAME, path=str(folder)).load_config()
    configured = config.CourseDirectory.get("root", "") if "CourseDirectory" in config else ""
    config.CourseDirectory.root = str((folder / configured).resolve())
    return config


def load_course(folder: Path) -> Course:
    """The course whose ``nbgrader_config.py`` is in ``folder``, resolved as nbgrader would.

    nbgrader's CourseDirectory reads the config; its root defaults to (and a relative root
    is taken from) the folder nbgrader runs in, which is the config's folder here.
    """
    from nbgrader.coursedir import CourseDirectory

    folder = Path(folder).resolve()
    config_path = folder / CONFIG_NAME
    config = nbgrader_config(folder)
    coursedir = CourseDirectory(config=config)
    root = Path(coursedir.root)
    return Course(
        root=root,
        config=config_path,
        source=root / coursedir.source_directory,
        release=root / coursedir.release_directory,
        submitted=root / coursedir.submitted_directory,
        autograded=root / coursedir.autograded_directory,
        feedback=root / coursedir.feedback_directory,
        db_url=absolute_db_url(coursedir.db_url, folder),
        loaded_config=config,
    )


def as_course(course: Course | Path) -> Course:
    """``course`` itself, or the course whose config is in that folder: a command builds its
    Course once and hands it down; the Python API also takes the folder."""
    return course if isinstance(course, Course) else load_course(course)


def handed_in(course: Course, assignment: str) -> tuple[list[str], dict[str, str]]:
    """(students with a folder ``submitted/<student>/<assignment>/`` nbgrader can grade,
    sorted; {student: why not} for the others): one odd folder name never stops the rest."""
    if not course.submitted.is_dir():
        return [], {}
    found = sorted(p.parent.name for p in course.submitted.glob(f"*/{assignment}") if p.is_dir())
    problems = {name: id_problem(name) for name in found}
    refused = {name: problem for name, problem in problems.items() if problem}
    return [name for name in found if name not in refused], refused


def submitted_students(course: Course, assignment: str) -> list[str]:
    """Students with a folder ``submitted/<student>/<assignment>/``, sorted; refuses ids
    the gradebook cannot hold."""
    gradable, refused = handed_in(course, assignment)
    check_ids("student", refused)
    return gradable


def check_source(course: Course, assignment: str) -> None:
    """Refuse an assignment without a source folder, or with a name the gradebook cannot hold."""
    check_ids("assignment", [assignment])
    if not (course.source / assignment).is_dir():
        raise AutogradeError(f"unknown assignment {assignment!r}: no {course.source / assignment}")


def check_gradebook(course: Course) -> None:
    """Refuse a sqlite gradebook file that does not exist (opening it would create one)."""
    path = course.sqlite_file
    if path is not None and not path.is_file():
        raise AutogradeError(f"no gradebook at {path}: run nbgrader generate_assignment first")


def check_gradable(course: Course, assignment: str) -> None:
    """Refuse, with what to do, an assignment that nbgrader could not grade."""
    check_source(course, assignment)
    check_gradebook(course)
    try:
        with Gradebook(course.db_url) as gradebook:
            gradebook.find_assignment(assignment)
    except MissingEntry as error:
        raise AutogradeError(
            f"assignment {assignment!r} is not in the gradebook: run "
            f"`nbgrader generate_assignment {assignment}` first"
        ) from error
    except SQLAlchemyError as error:
        raise AutogradeError(
            f"cannot open the gradebook {shown_url(course.db_url)}: {error}"
        ) from error
