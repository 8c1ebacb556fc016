"""The private gradebook of each job: the course's assignments and this one student's own
rows, nobody else's.

The student's kernel can read its job folder (``../../../gradebook.db`` from the notebook),
so a copy of the whole course gradebook there would show every student's grades, comments
and names. ``nbgrader autograde`` needs only what generate_assignment wrote (assignments,
notebooks, cells) and the graded student's earlier submission, if any.

The course gradebook may be any database nbgrader supports (``CourseDirectory.db_url``:
sqlite, PostgreSQL); a job's is always a private sqlite file, so a kernel never sees the
course database's URL, socket or password.
"""

import contextlib
import functools
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from nbgrader.api import Base, Gradebook
from sqlalchemy.exc import SAWarning
from sqlalchemy.pool import NullPool

from autograder.grading.course.course_root import AutogradeError, Course
from autograder.grading.pipeline.autograde.job.folder import JOB_GRADEBOOK_NAME
from autograder.grading.pipeline.autograde.job.spec import GradeRows

# The tables that hold a student's data; every other table of nbgrader's schema holds what
# generate_assignment wrote (assignments, notebooks, cells, the course), shared by all jobs.
STUDENT_TABLES = ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")
# nbgrader's schema version, which nbgrader's Gradebook writes outside its own metadata.
ALEMBIC_VERSION = sa.Table(
    "alembic_version",
    sa.MetaData(),
    sa.Column("version_num", sa.String(32), nullable=False),
)


@contextlib.contextmanager
def quiet_gradebook() -> Iterator[None]:
    """Silence the SQLAlchemy autoflush warnings that nbgrader's add_submission raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        yield


def shared_tables() -> list[sa.Table]:
    """nbgrader's tables without student data, parents first; refuses a schema whose
    student data would leak into them (a table pointing at a student table)."""
    tables = [t for t in Base.metadata.sorted_tables if t.name not in STUDENT_TABLES]
    for table in tables:
        for key in table.foreign_keys:
            if key.column.table.name in STUDENT_TABLES:
                raise AutogradeError(f"nbgrader's table {table.name} refers to student data")
    return tables


@functools.lru_cache(maxsize=8)
def reader(db_url: str) -> sa.Engine:
    """An engine reading ``db_url`` in transactions that see one consistent state.

    PostgreSQL: REPEATABLE READ. sqlite: pysqlite starts no transaction before a SELECT,
    so each would see the file as it is then; an explicit BEGIN makes them one read.
    No pool: nothing stays connected to the course database between jobs.
    """
    engine = sa.create_engine(db_url, poolclass=NullPool)
    if engine.dialect.name != "sqlite":
        return engine.execution_options(isolation_level="REPEATABLE READ")

    @sa.event.listens_for(engine, "connect")
    def _manual_transactions(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None

    @sa.event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


def sqlite_engine(path: Path) -> sa.Engine:
    """An engine writing the job gradebook file ``path``: a scratch file, written without
    waiting for the disk (a sync per job cost more than the rest of its copying)."""
    engine = sa.create_engine(f"sqlite:///{path}", poolclass=NullPool)

    @sa.event.listens_for(engine, "connect")
    def _scratch_file(dbapi_connection, _record) -> None:
        dbapi_connection.execute("PRAGMA synchronous = OFF")
        dbapi_connection.execute("PRAGMA journal_mode = MEMORY")

    return engine


def fetch(connection: sa.Connection, query: sa.Select) -> list[dict]:
    """The rows of ``query`` as dicts (column -> value), ready to insert elsewhere."""
    return [dict(row) for row in connection.execute(query).mappings()]


def copy_rows(target: sa.Engine, rows: list[tuple[sa.Table, list[dict]]]) -> None:
    """Insert ``rows`` (table, its rows; parents first) into ``target`` in one transaction."""
    with target.begin() as connection:
        for table, values in rows:
            if values:
                connection.execute(table.insert(), values)


def snapshot_gradebook(course: Course, target: Path) -> Path:
    """A sqlite gradebook with the course gradebook's assignments, notebooks and cells and
    no student, for the jobs' gradebooks to start from.

    Read with SQLAlchemy from any database nbgrader supports (sqlite, PostgreSQL, ...) in
    one transaction, so formgrader writing meanwhile cannot tear it; written into a fresh
    file, so no student's data is in it, not even in free pages.
    """
    tables = shared_tables()
    with reader(course.db_url).begin() as source:
        rows = [(table, fetch(source, sa.select(table))) for table in tables]
        if sa.inspect(source).has_table(ALEMBIC_VERSION.name):
            rows.append((ALEMBIC_VERSION, fetch(source, sa.select(ALEMBIC_VERSION))))
    engine = sqlite_engine(target)
    try:
        Base.metadata.create_all(engine)
        ALEMBIC_VERSION.create(engine)
        copy_rows(engine, rows)
    finally:
        engine.dispose()
    return target


def own_rows(course: Course, assignment: str, student: str) -> list[tuple[sa.Table, list[dict]]]:
    """The student's own rows for ``assignment`` in the course gradebook, parents first.

    With their ids, so the job's gradebook holds that submission exactly as the course's
    does: an extension still counts toward lateness, and a manual grade still marks the
    regraded cell for review, as nbgrader does.
    """
    tables = Base.metadata.tables
    people, handed_in = tables["student"], tables["submitted_assignment"]
    notebooks, assignments = tables["submitted_notebook"], tables["assignment"]
    with reader(course.db_url).begin() as source:
        submissions = fetch(
            source,
            sa.select(handed_in)
            .join(assignments, handed_in.c.assignment_id == assignments.c.id)
            .where(handed_in.c.student_id == student, assignments.c.name == assignment),
        )
        in_submission = notebooks.c.assignment_id.in_([row["id"] for row in submissions])
        notebook_rows = fetch(source, sa.select(notebooks).where(in_submission))
        notebook_ids = [row["id"] for row in notebook_rows]
        return [
            (people, fetch(source, sa.select(people).where(people.c.id == student))),
            (handed_in, submissions),
            (notebooks, notebook_rows),
            *[
                (
                    table,
                    fetch(source, sa.select(table).where(table.c.notebook_id.in_(notebook_ids))),
                )
                for table in (tables["grade"], tables["comment"])
            ],
        ]


def add_own_rows(course: Course, job_gradebook: Path, assignment: str, student: str) -> None:
    """Copy the student's own rows for ``assignment`` from the course gradebook into a job's.

    A student not in the course gradebook yet gets none: nbgrader creates them, as it
    would in the course gradebook (``Autograde.create_student``).
    """
    engine = sqlite_engine(job_gradebook)
    try:
        copy_rows(engine, own_rows(course, assignment, student))
    finally:
        engine.dispose()


def job_gradebook_bytes(course: Course, snapshot: Path, assignment: str, student: str) -> bytes:
    """A job's private gradebook, as bytes to ship: the snapshot plus the student's rows."""
    with tempfile.TemporaryDirectory(prefix="autograde-gradebook-") as folder:
        path = Path(folder) / JOB_GRADEBOOK_NAME
        shutil.copyfile(snapshot, path)
        add_own_rows(course, path, assignment, student)
        return path.read_bytes()


def read_grade_rows(db_url: str, assignment: str, student: str) -> GradeRows:
    """The automatic fields nbgrader wrote for one submission, as plain data."""
    with quiet_gradebook(), Gradebook(db_url) as book:
        submission = book.find_submission(assignment, student)
        penalties, grades, comments = {}, {}, {}
        for notebook in submission.notebooks:
            penalties[notebook.name] = notebook.late_submission_penalty
            for grade in notebook.grades:
                grades[notebook.name, grade.name] = (grade.auto_score, grade.needs_manual_grade)
            for comment in notebook.comments:
                comments[notebook.name, comment.name] = comment.auto_comment
        return GradeRows(submission.timestamp, penalties, grades, comments)
