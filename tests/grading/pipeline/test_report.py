"""Does the grading report show a really graded cohort, and keep hidden tests and scripts out?

One small workspace is graded with the real nbgrader (00-recipe, the students who hand it
in); hand-written integrity.json and autograde_log.json go into a copy of it.
"""

import base64
import json
import shutil
from html.parser import HTMLParser

import nbformat
import pytest
from hidden_lines import distinctive_hidden_lines
from nbgrader.api import Gradebook

from autograder.grading.assurance.cohort import build_submission, students, submitted_assignments
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.nbgrader_workspace import run_nbgrader
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.pipeline.report.gather import write_report

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-recipe"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SCRIPT = "<script>alert('x')</script>"
EVIL_STUDENT = "<img src=x onerror=alert(1)>"
TRACEBACK_SECRET = "this traceback line must never be shown"

FLAGS = [
    {
        "student": "bug-power-rule",
        "assignment": ASSIGNMENT,
        "cell": "scalar",
        "line": 7,
        "rule": "calls-torch-autograd",
        "detail": "uses torch.autograd.grad in a solution cell",
    },
    {
        "student": "blank",
        "assignment": ASSIGNMENT,
        "cell": "no_grad",
        "line": 2,
        "rule": "odd-import",
        "detail": f"imports {SCRIPT}",
    },
    {
        "student": "bug-power-rule",
        "assignment": ASSIGNMENT,
        "cell": "scalar",
        "line": 3,
        "rule": "runtime-process",
        "detail": "line 3: subprocess.Popen ('true',)",
    },
    {
        "student": "reference",
        "assignment": "01-worked-example",
        "cell": "backward",
        "line": 1,
        "rule": "other-assignment-rule",
        "detail": "belongs to another assignment",
    },
]


def log_record(student, status, seconds, message="", assignment=ASSIGNMENT, day=1):
    return {
        "student": student,
        "assignment": assignment,
        "status": status,
        "seconds": seconds,
        "seed": 1234,
        "message": message,
        "finished_at": f"2024-05-0{day}T10:00:00",
    }


LOG = [
    log_record("bug-no-grad-not-restored", "timeout", 120.0, "cell timed out first time"),
    log_record("bug-no-grad-not-restored", "graded", 14.0),  # a regrade: this one wins
    log_record("reference", "graded", 12.5),
    # a later run found reference unchanged: status "skipped", but it was graded on day 1
    log_record("reference", "skipped", 0.0, "unchanged since graded", day=2),
    log_record("bug-power-rule", "graded", 13.0),
    log_record("blank", "kernel-died", 3.0, f"kernel died {SCRIPT}"),
    log_record(EVIL_STUDENT, "memory", 40.0, "out of memory"),
    log_record("late-student", "skipped", None, "handed in after the deadline"),
    log_record("reference", "error", 1.0, "another assignment's failure", "01-worked-example"),
]


class Page(HTMLParser):
    """What a browser would build: text, table rows per section, images, script count."""

    def __init__(self, text):
        super().__init__()
        self.section = ""
        self.rows: dict[str, list[list[str]]] = {}
        self.images: list[str] = []
        self.scripts = 0
        self.text: list[str] = []
        self._heading = False
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self._heading, self.section = True, ""
        elif tag == "tr":
            self._row = []
        elif tag == "td":
            self._cell = []
        elif tag == "img":
            self.images.append(dict(attrs)["src"])
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "h2":
            self._heading = False
        elif tag == "td":
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows.setdefault(self.section, []).append(self._row)

    def handle_data(self, data):
        self.text.append(data)
        if self._heading:
            self.section += data
        if self._cell is not None:
            self._cell.append(data)

    @property
    def visible(self) -> str:
        return "".join(self.text)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A workspace where nbgrader autograded 00-recipe of every demo student handing it in."""
    root = tmp_path_factory.mktemp("report") / "workspace"
    release = generate_release(root, [ASSIGNMENT]).release
    for student in students():
        if ASSIGNMENT in submitted_assignments(student, [ASSIGNMENT]):
            target = notebook_path(root / "submitted" / student, ASSIGNMENT)
            target.parent.mkdir(parents=True)
            nbformat.write(build_submission(student, ASSIGNMENT, SOLUTIONS_DIR, release), target)
    run_nbgrader(root, "autograde", ASSIGNMENT)
    return root


def copy_workspace(graded, tmp_path):
    return shutil.copytree(graded, tmp_path / "workspace")


@pytest.fixture(scope="module")
def with_logs(graded, tmp_path_factory):
    """The graded workspace plus an integrity scan and a grading log; its report written."""
    root = copy_workspace(graded, tmp_path_factory.mktemp("with-logs"))
    (root / "integrity.json").write_text(json.dumps(FLAGS))
    (root / "autograde_log.json").write_text(json.dumps(LOG))
    out = root.parent / "report"
    [page] = write_report(root, [ASSIGNMENT], out)
    return page


@pytest.fixture(scope="module")
def page(with_logs):
    return Page(with_logs.read_text())


def row_for(page, section, first_cell):
    rows = [row for row in page.rows[section] if row[0] == first_cell]
    assert len(rows) == 1, f"{first_cell!r} in {section}: {page.rows.get(section)}"
    return rows[0]


def test_report_is_written_where_promised(with_logs):
    assert with_logs.name == "report.html"
    assert with_logs.parent.name == ASSIGNMENT
    assert with_logs.stat().st_size > 0


def test_every_student_has_a_row_with_their_score(page):
    expected = {"reference": "7", "blank": "0", "bug-power-rule": "2"}
    for student in students():
        if ASSIGNMENT in submitted_assignments(student, [ASSIGNMENT]):
            row = row_for(page, "Students", student)
            if student in expected:
                assert row[1] == expected[student]
            assert row[2] == "7"


def test_header_summarises_the_cohort(page):
    assert "Grading report: 00-recipe" in page.visible
    summary = page.visible.split("Grade distribution")[0]
    assert "submissions4" in summary  # dt and dd run together in the text
    assert "max score7" in summary
    # when graded, from the log; a later "skipped" record is not a grading
    assert "graded2024-05-01T10:00:00 (grading log)" in summary


def test_planted_bugs_failing_messages_are_shown(page):
    failures = page.rows["Checks that failed most"]
    by_cell = {(row[0], row[2].splitlines()[0]) for row in failures}
    # bug-power-rule's off-by-one exponent, in both cells it breaks
    power = "AssertionError: grad of input 'x' does not match torch (cpu, float64): wrong values"
    assert ("test_scalar_ops", power) in by_cell
    assert ("test_recipe", power) in by_cell
    # bug-no-grad-not-restored fails the nested-blocks check: its message is shown
    assert any(
        cell == "test_no_grad" and "must put back the state saved on entry" in msg
        for cell, msg in by_cell
    ), by_cell
    # the blank release fails every test cell the same way: one group of one
    blank = [row for row in failures if row[2] == "NotImplementedError"]
    assert {row[0] for row in blank} == {"test_scalar_ops", "test_recipe", "test_no_grad"}
    assert all(row[3] == "blank" for row in blank)


def test_exercise_table_follows_the_notebook(page):
    rows = page.rows["Score per exercise across the cohort"]
    assert [row[0] for row in rows] == ["test_scalar_ops", "test_recipe", "test_no_grad"]
    scalar = rows[0]  # blank and bug-power-rule lose it, out of four students
    assert scalar[1:] == ["2", "50%", "2", "0", "2"]


def test_flags_of_this_assignment_are_listed(page):
    flagged = [row for row in page.rows["Flagged submissions"] if row[0] == "bug-power-rule"]
    assert flagged == [
        ["bug-power-rule", "scalar", "3", "runtime-process", "line 3: subprocess.Popen ('true',)"],
        [
            "bug-power-rule",
            "scalar",
            "7",
            "calls-torch-autograd",
            "uses torch.autograd.grad in a solution cell",
        ],
    ]
    assert "other-assignment-rule" not in page.visible
    # scan flags, then the runtime record's
    # columns: student, score, max, late, scan flags, runtime flags, status
    assert row_for(page, "Students", "bug-power-rule")[4:6] == ["1", "1"]
    assert row_for(page, "Students", "blank")[4:6] == ["1", "0"]
    assert "runtime-process" in page.visible and "Rules runtime-*" in page.visible


def test_grading_failures_use_each_students_latest_record(page):
    failed = {row[0]: row[1] for row in page.rows["Grading failures"]}
    assert failed == {"blank": "kernel-died", EVIL_STUDENT: "memory"}
    assert row_for(page, "Students", "bug-no-grad-not-restored")[-1] == "graded"
    assert row_for(page, "Students", "late-student")[-1] == "skipped"
    assert row_for(page, "Students", "reference")[-1] == "skipped"
    assert row_for(page, "Students", EVIL_STUDENT)[1] == "—"  # in the log, not the gradebook


def test_student_strings_are_escaped(with_logs, page):
    assert page.scripts == 1  # the report's own sorting script, nothing a student wrote
    assert SCRIPT in page.visible  # shown as text...
    assert EVIL_STUDENT in page.visible
    raw = with_logs.read_text()
    assert SCRIPT not in raw and EVIL_STUDENT not in raw  # ...never as markup


def test_figures_are_embedded_and_saved_as_png(with_logs, page):
    embedded = [base64.b64decode(src.split(",", 1)[1]) for src in page.images]
    assert all(src.startswith("data:image/png;base64,") for src in page.images)
    saved = sorted(with_logs.parent.glob("*.png"))
    assert [p.name for p in saved] == ["exercises.png", "grades.png", "grading-time.png"]
    assert sorted(p.read_bytes() for p in saved) == sorted(embedded)
    assert all(png.startswith(PNG_SIGNATURE) for png in embedded)


def test_hidden_test_source_never_shows(graded, page):
    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, ASSIGNMENT), as_version=4)
    hidden = set().union(*(distinctive_hidden_lines(cell.source) for cell in notebook.cells))
    assert hidden
    assert [line for line in hidden if line in page.visible] == []
    # The tracebacks in the graded notebooks do quote them, so the search is not blind.
    autograded = notebook_path(graded / "autograded" / "bug-no-grad-not-restored", ASSIGNMENT)
    assert any(line in autograded.read_text() for line in hidden)


def test_missing_scan_and_log_are_said(graded, tmp_path):
    [page_path] = write_report(graded, [ASSIGNMENT], tmp_path)
    text = Page(page_path.read_text()).visible.lower()
    assert "no integrity scan was run" in text
    assert "no grading log" in text
    assert not (tmp_path / ASSIGNMENT / "grading-time.png").exists()


def test_report_is_deterministic(graded, tmp_path):
    first = write_report(graded, [ASSIGNMENT], tmp_path / "one")[0]
    second = write_report(graded, [ASSIGNMENT], tmp_path / "two")[0]
    assert first.read_bytes() == second.read_bytes()


def test_unknown_or_empty_assignment_is_a_clear_error(graded, tmp_path):
    with pytest.raises(ValueError, match="99-nowhere"):
        write_report(graded, ["99-nowhere"], tmp_path / "out")
    root = copy_workspace(graded, tmp_path)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("98-empty")
    with pytest.raises(ValueError, match="98-empty.*no submissions"):
        write_report(root, [ASSIGNMENT, "98-empty"], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written when one assignment is bad


def error_output(message):
    """An error output as IPython writes it: coloured name, and a traceback to keep hidden."""
    return nbformat.v4.new_output(
        "error",
        ename="AssertionError",
        evalue=f"\x1b[31m{message}\x1b[0m\nfigures that differ per student",
        traceback=[TRACEBACK_SECRET],
    )


def test_failing_checks_rank_by_frequency(graded, tmp_path):
    # Plant: three students fail the last test cell alike, one fails the first cell.
    root = copy_workspace(graded, tmp_path)
    planted = {"blank": "rare", "reference": "frequent", "bug-power-rule": "frequent"}
    planted["bug-no-grad-not-restored"] = "frequent"
    for student, message in planted.items():
        path = notebook_path(root / "autograded" / student, ASSIGNMENT)
        path.chmod(0o644)
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.cell_type == "code":
                cell.outputs = []
            wanted = "test_scalar_ops" if message == "rare" else "test_no_grad"
            if grade_id == wanted:
                cell.outputs = [error_output(f"{message} <b>failure</b>")]
        nbformat.write(notebook, path)
    [page_path] = write_report(root, [ASSIGNMENT], tmp_path / "out")
    page = Page(page_path.read_text())
    rows = page.rows["Checks that failed most"]
    assert [(row[0], row[1], row[2].splitlines()[0]) for row in rows] == [
        ("test_no_grad", "3", "AssertionError: frequent <b>failure</b>"),
        ("test_scalar_ops", "1", "AssertionError: rare <b>failure</b>"),
    ]
    assert rows[0][3] == "bug-no-grad-not-restored, bug-power-rule, reference"
    raw = page_path.read_text()
    assert TRACEBACK_SECRET not in raw
    assert "\x1b" not in raw and "<b>failure" not in raw


def test_students_table_sorts_when_a_head_is_clicked_in_chromium(with_logs):
    # The page's one script, run by a real browser: click "score", then again to reverse.
    from browser_helpers import chromium

    with chromium("report page test") as browser:
        page = browser.new_page()
        page.goto(with_logs.as_uri())
        table = page.locator("table.sortable").last

        def scores() -> list[float]:
            cells = table.locator("tbody tr td:nth-child(2)").all_inner_texts()
            return [float(text) for text in cells if text != "—"]

        assert len(scores()) >= 3
        table.locator("th", has_text="score").click()
        ascending = scores()
        table.locator("th", has_text="score").click()
        descending = scores()
    assert ascending == sorted(ascending) and descending == sorted(descending, reverse=True)
    assert ascending != descending, "the cohort's scores differ, so the two orders must too"
