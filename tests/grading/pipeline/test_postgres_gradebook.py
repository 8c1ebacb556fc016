"""The same cohort graded with its gradebook on sqlite and on a real PostgreSQL server
(``CourseDirectory.db_url``): the same grades, feedback, export, report and zeroing.

The server is the ``postgres_server`` fixture (tests/postgres_server.py): skipped, with
the reason, where PostgreSQL is not installed.
"""

import re
import shutil

import nbformat
import pytest
import sqlalchemy as sa

from autograder.grading.assurance.cohort import BLANK, REFERENCE, build_submission
from autograder.grading.assurance.redteam import CHEATS
from autograder.grading.authoring.release import generate_release
from autograder.grading.cli import main
from autograder.grading.course.course_root import load_course
from autograder.grading.course.nbgrader_workspace import copy_workspace, course_config, run_nbgrader
from autograder.grading.course.repo_paths import NBGRADER_CONFIG, SOLUTIONS_DIR, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.integrity import read_flags
from autograder.grading.pipeline.report.gather import gather_report

pytestmark = pytest.mark.slow

RECIPE = "00-recipe"
PLANTED_BUG = "bug-power-rule"
# Uses torch inside the engine: flagged by the integrity scan, its tests zeroed.
CHEAT = next(c for c in CHEATS if c.student == "cheat-torch-inside-engine")
COHORT = (REFERENCE, BLANK, PLANTED_BUG, CHEAT.student)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A released 00-recipe course with the cohort handed in, not graded yet."""
    root = tmp_path_factory.mktemp("postgres") / "template"
    release = generate_release(root, [RECIPE]).release
    for student in COHORT:
        notebook = build_submission(
            CHEAT.base if student == CHEAT.student else student, RECIPE, SOLUTIONS_DIR, release
        )
        if student == CHEAT.student:
            CHEAT.edit(notebook)
        target = notebook_path(root / "submitted" / student, RECIPE)
        target.parent.mkdir(parents=True)
        nbformat.write(notebook, target)
    return root


def on_postgres(template, root, db_url):
    """A copy of the course whose gradebook is the PostgreSQL database ``db_url``.

    generate_assignment fills the new database as an instructor would; the release it
    rewrites is put back as released, so both courses compare submissions with the same one.
    """
    copy_workspace(template, root)
    (root / "gradebook.db").unlink()  # nothing may read or write a sqlite gradebook here
    config = course_config(
        NBGRADER_CONFIG, None, db_url, source_directory="source", release_directory="release"
    )
    (root / "nbgrader_config.py").write_text(config)
    run_nbgrader(root, "generate_assignment", RECIPE, "--force")
    shutil.rmtree(root / "release")
    shutil.copytree(template / "release", root / "release")
    return root


def grade_everything(root):
    """autograde with zeroing, feedback, export and report, as the instructor runs them."""
    where = ["--root", str(root)]
    assert main(["autograde", RECIPE, *where, "--workers", "2", "--zero-flagged"]) == 0
    assert main(["feedback", RECIPE, *where]) == 0
    assert main(["export", *where]) == 0


@pytest.fixture(scope="module")
def graded(template, postgres_server):
    """(sqlite course, PostgreSQL course), each graded end to end."""
    sqlite_root = copy_workspace(template, template.parent / "sqlite")
    postgres_root = on_postgres(
        template, template.parent / "postgresql", postgres_server.create_database()
    )
    for root in (sqlite_root, postgres_root):
        grade_everything(root)
    return sqlite_root, postgres_root


def test_postgresql_course_grades_like_sqlite(graded):
    sqlite_root, postgres_root = graded
    sqlite_course, postgres_course = load_course(sqlite_root), load_course(postgres_root)
    assert postgres_course.db_url.startswith("postgresql+psycopg://")
    assert not (postgres_root / "gradebook.db").exists(), "a sqlite gradebook was made"
    for student in COHORT:
        expected = cell_scores(sqlite_course.db_url, student, RECIPE)
        assert cell_scores(postgres_course.db_url, student, RECIPE) == expected, student
    # The grades are PostgreSQL's own rows, and the cohort's grades differ from each other.
    engine = sa.create_engine(postgres_course.db_url)
    with engine.connect() as connection:
        handed_in = connection.execute(sa.text("SELECT student_id FROM submitted_assignment"))
        assert sorted(row[0] for row in handed_in) == sorted(COHORT)
    engine.dispose()
    totals = {
        s: sum(x.score for x in cell_scores(sqlite_course.db_url, s, RECIPE).values())
        for s in COHORT
    }
    assert totals[REFERENCE] > totals[PLANTED_BUG] > totals[BLANK] == 0


def test_integrity_zeroing_writes_the_postgresql_gradebook(graded):
    sqlite_root, postgres_root = graded
    flags = [read_flags(root / "integrity.json") for root in graded]
    assert flags[0] == flags[1] and {f.student for f in flags[0]} == {CHEAT.student}
    # The cheat's reference engine would pass every test; the zeroing took the points.
    zeroed = cell_scores(load_course(postgres_root).db_url, CHEAT.student, RECIPE)
    assert [n for n, s in zeroed.items() if s.score == 0]


def test_feedback_and_export_are_identical(graded):
    sqlite_root, postgres_root = graded
    # nbgrader's export lists rows in the database's own order (no ORDER BY), which differs
    # between the two: the same header and the same rows, in any order.
    exports = [(root / "grades.csv").read_text().splitlines() for root in graded]
    assert exports[0][0] == exports[1][0] and sorted(exports[0]) == sorted(exports[1])
    assert len(exports[0]) == 1 + len(COHORT)
    for student in COHORT:
        page = f"feedback/{student}/{RECIPE}/{RECIPE}.html"
        texts = [without_job_paths((root / page).read_text()) for root in graded]
        assert texts[0] == texts[1], student


def without_job_paths(text: str) -> str:
    """``text`` with each run's temporary job folder (it differs per run) made the same."""
    return re.sub(r"grade-run-[\w-]+/autograde-job-\w+", "JOB", text)


def test_reports_are_identical(graded):
    sqlite_root, postgres_root = graded
    reports = [gather_report(load_course(root), RECIPE) for root in graded]
    # Everything read from the gradebook, the notebooks and the scan; the logs' timings
    # differ from run to run, so the pages are compared over the same log.
    fields = ("max_score", "submissions", "exercises", "failures", "flags")
    for field in fields:
        assert getattr(reports[0], field) == getattr(reports[1], field), field
    shutil.copyfile(sqlite_root / "autograde_log.json", postgres_root / "autograde_log.json")
    for root in graded:
        assert main(["report", RECIPE, "--root", str(root)]) == 0
    page = f"report/{RECIPE}/report.html"
    assert (sqlite_root / page).read_text() == (postgres_root / page).read_text()
