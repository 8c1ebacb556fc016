"""The student's JupyterLab and the instructor's formgrader, driven in a real browser.

A real ``jupyter lab`` started as ``make lab`` starts it (student profile, no forced
matplotlib backend) serves a working copy of a temporary copy of the course (127.0.0.1, free
port, token); Debian's headless Chromium, driven by playwright, opens notebook 01, types a
correct ``unbroadcast`` into the editor, runs the notebook and reads the green check line;
runs the progress cell and reads its table; types a wrong answer and reads the failure
table and a traceback without the check library's frames; finds no nbgrader instructor
tool and no news prompt; runs notebook 08's spirals cell and sees the figure (an ``img`` in
a ``.jp-RenderedImage``) and the given code collapsed. Then the instructor's server
(``make formgrader``) shows nbgrader's menu and the formgrader lists the course's
assignments. Screenshots go to build/screenshots/. Without playwright or Chromium the test
is skipped, saying why.
"""

import json
import time

import nbformat
import pytest
from browser_helpers import (
    PAGE_MS,
    RUN_MS,
    SCREENSHOTS,
    chromium,
    code_cell,
    copy_course,
    evidence_on_failure,
    jupyter_lab,
    replace_source,
    run_cell,
    run_menu,
    wait_until_run,
)

from autograder.grading.authoring.engine_sync import strip_solution_markers
from autograder.grading.authoring.student_lab import update_work_copy
from autograder.grading.course.repo_paths import REPO_ROOT, SOLUTIONS_DIR, notebook_path

pytestmark = pytest.mark.slow

NOTEBOOK = "01-worked-example"
ASSIGNMENTS = ("00-recipe", "01-worked-example")

WRONG_UNBROADCAST = """\
def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    # sums the prepended dimensions twice over: right shape, wrong values
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad * 2
"""


def solved_cell(grade_id: str) -> str:
    """The reference answer of a solution cell, without nbgrader's markers."""
    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, NOTEBOOK), as_version=4)
    cell = next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )
    return strip_solution_markers(cell.source)


def collapsed_cells(assignment: str) -> int:
    """How many cells open collapsed in the lab: every cell of given engine code, and a torch
    twin kept out of sight until its check passes (08's torch side).

    Counted in solutions/: the release drops the instructor-only ``engine`` metadata, and
    nbgrader releases every cell, so the count is the same.
    """
    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    hidden = [c for c in notebook.cells if c.metadata.get("jupyter", {}).get("source_hidden")]
    given = [c for c in notebook.cells if c.metadata.get("engine", {}).get("given")]
    assert given, f"{assignment} has no given engine cells: the collapse check means nothing"
    assert all(c in hidden for c in given), f"{assignment}: a given engine cell is not collapsed"
    return len(hidden)


# nbgrader's instructor tools and JupyterLab's news prompt, as they show in the instructor's lab.
NBGRADER_MENU = ".lm-MenuBar-itemLabel:text-is('Nbgrader')"
VALIDATE_BUTTON = ".jp-NotebookPanel-toolbar [title='Validate Assignment']"
CREATE_ASSIGNMENT_TAB = ".lm-TabBar-tab[data-id^='nbgrader']"
NEWS_PROMPT = "text=official Jupyter news"
FIGURE_NOTEBOOK = "08-capstone"


def assert_student_profile(page) -> None:
    """No nbgrader instructor tool and no news prompt in the student's lab."""
    from playwright.sync_api import expect

    expect(page.locator(".lm-MenuBar-itemLabel", has_text="Kernel")).to_have_count(1)
    for selector in (NBGRADER_MENU, VALIDATE_BUTTON, CREATE_ASSIGNMENT_TAB, NEWS_PROMPT):
        expect(page.locator(selector), selector).to_have_count(0)


def test_student_notebook_and_formgrader_in_chromium(tmp_path):
    from playwright.sync_api import expect

    # expect() waits 5 s by default, not the page's timeout: too short for JupyterLab to
    # render a notebook while the rest of the suite loads both cores.
    expect.set_options(timeout=PAGE_MS)

    started = time.perf_counter()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    root = copy_course(REPO_ROOT, tmp_path / "course-root")
    work = update_work_copy(root / "course", tmp_path / "work").work
    timings: dict[str, float] = {}
    shots: list[str] = []

    def shot(target, name: str) -> None:
        path = SCREENSHOTS / name
        target.screenshot(path=str(path))
        shots.append(str(path.relative_to(REPO_ROOT)))

    with chromium("browser test") as browser:
        with jupyter_lab(work, tmp_path / "student-state", student=True) as server:
            timings["student lab start"] = time.perf_counter() - started
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(PAGE_MS)
            with evidence_on_failure(page, "student-lab", server):
                student_lab(page, server, shot, timings, started)
        with jupyter_lab(root, tmp_path / "instructor-state") as server:
            timings["instructor lab start"] = time.perf_counter() - started
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(PAGE_MS)
            with evidence_on_failure(page, "instructor-lab", server):
                instructor_lab(page, server, shot, timings, started)

    timings["total"] = time.perf_counter() - started
    record = {"screenshots": shots, "seconds": {k: round(v, 1) for k, v in timings.items()}}
    (SCREENSHOTS / "browser-test.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


def student_lab(page, server, shot, timings: dict[str, float], started: float) -> None:
    """Notebook 01's checks, no instructor tools, and notebook 08's first figure."""
    from playwright.sync_api import expect

    page.goto(server.url(f"lab/tree/{NOTEBOOK}/{NOTEBOOK}.ipynb"))

    solution = code_cell(page, "def unbroadcast(grad")
    check = code_cell(page, 'check_array("unbroadcast to (3,)"')
    expect(solution).to_have_count(1)
    expect(check).to_have_count(1)
    # The kernel is this environment's Python, and it is up.
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_have_count(
        1, timeout=PAGE_MS
    )
    timings["notebook open"] = time.perf_counter() - started

    # A correct answer, typed into the editor; Run All stops at the next exercise.
    replace_source(page, solution, solved_cell("unbroadcast"))
    run_menu(page, "Run All Cells")
    passed = check.locator(".autograder-pass")
    expect(passed).to_have_count(2, timeout=RUN_MS)
    expect(passed.first).to_contain_text("unbroadcast to (3,): matches torch (float64)")
    colour = passed.first.evaluate("e => getComputedStyle(e).borderLeftColor")
    assert colour == "rgb(26, 127, 55)", colour  # the green line
    wait_until_run(check)
    check.scroll_into_view_if_needed()
    shot(check, "01-check-pass.png")
    timings["correct answer checked"] = time.perf_counter() - started

    # Run All goes on to Exercise 2's check, fails there (NotImplementedError) and
    # stops. Wait for that: a cell run while cells are still queued ahead of an
    # error is aborted by the kernel without output.
    blocked = code_cell(page, 'what="backward() on a non-scalar output')
    expect(blocked.locator(".jp-OutputArea-output")).to_contain_text(
        "NotImplementedError", timeout=RUN_MS
    )
    wait_until_run(blocked)
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_have_count(1)

    # The progress cell: this exercise passes, the next ones are not attempted.
    progress_cell = code_cell(page, "show_progress(globals()")
    run_cell(page, progress_cell)
    rows = progress_cell.locator(".autograder-progress-row")
    expect(rows.first).to_be_visible(timeout=RUN_MS)
    wait_until_run(progress_cell)
    statuses = {
        row.locator("code").inner_text(): row.get_attribute("data-status") for row in rows.all()
    }
    assert statuses["test_unbroadcast"] == "pass", statuses
    assert statuses["test_backward"] == "not attempted", statuses
    assert len(statuses) == 8, statuses
    shot(progress_cell, "01-progress.png")

    # A wrong answer: the failure block with the table, then the AssertionError.
    replace_source(page, solution, WRONG_UNBROADCAST)
    page.keyboard.press("Shift+Enter")  # runs the cell, selects the check below
    page.keyboard.press("Shift+Enter")  # runs the check
    failed = check.locator(".autograder-fail")
    expect(failed).to_have_count(1, timeout=RUN_MS)
    expect(failed).to_contain_text("unbroadcast to (3,) does not match torch")
    expect(failed).to_contain_text("wrong values")
    header = failed.locator("th").all_inner_texts()
    assert header == ["index", "expected (torch)", "got (yours)", "abs error"], header
    assert failed.locator("tbody tr").count() >= 1
    expect(failed.locator(".autograder-hint")).to_contain_text("twice torch's")
    # The plain-text error that nbgrader records follows the HTML block.
    traceback = check.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
    )
    expect(traceback).to_contain_text("AssertionError", timeout=RUN_MS)
    expect(traceback).to_contain_text("unbroadcast to (3,) does not match torch")
    # The student's cell and the message, without the check library's own frames.
    expect(traceback).to_contain_text("Cell In[")
    frames = traceback.inner_text()
    for grader_frame in ("autograder/checks", "compare.py", "site-packages"):
        assert grader_frame not in frames, f"grader frame {grader_frame!r} shown:\n{frames}"
    wait_until_run(check)
    expect(check.locator(".autograder-pass")).to_have_count(0)
    check.scroll_into_view_if_needed()
    shot(check, "01-check-fail.png")
    shot(page, "01-notebook.png")
    timings["wrong answer checked"] = time.perf_counter() - started

    assert_student_profile(page)
    response = page.goto(server.url("formgrader"))
    assert response is not None and response.status == 404, "formgrader in student lab"

    # A figure: notebook 08 draws the two spirals right after its setup cell.
    page.goto(server.url(f"lab/tree/{FIGURE_NOTEBOOK}/{FIGURE_NOTEBOOK}.ipynb"))
    setup = code_cell(page, "rng = np.random.default_rng(8)")
    spirals = code_cell(page, "points, labels = two_spirals(100, rng)")
    expect(spirals).to_have_count(1)
    # The given engine opens collapsed (cell metadata jupyter.source_hidden), each cell shown
    # as its first line; the student's exercises stay open.
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    collapsed = notebook.locator(".jp-InputPlaceholder")
    expect(collapsed).to_have_count(collapsed_cells(FIGURE_NOTEBOOK))
    expect(collapsed.filter(has_text="class Tensor:")).to_have_count(1)
    expect(code_cell(page, "class MLP(Module):")).to_have_count(1)
    shot(page, "08-opened.png")
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_have_count(
        1, timeout=PAGE_MS
    )
    run_cell(page, setup)
    wait_until_run(setup)
    run_cell(page, spirals)
    wait_until_run(spirals)
    # With MPLBACKEND=Agg in the kernel's environment plt.show() draws nothing here.
    image = spirals.locator(".jp-OutputArea-output.jp-RenderedImage img")
    outputs = spirals.locator(".jp-OutputArea-output").all_inner_texts()
    assert image.count() == 1, f"no figure under the spirals cell; its output: {outputs}"
    assert image.evaluate("e => e.naturalWidth") > 100
    shot(spirals, "08-figure.png")
    timings["figure drawn"] = time.perf_counter() - started


def instructor_lab(page, server, shot, timings: dict[str, float], started: float) -> None:
    """The instructor's lab has nbgrader's menu; its formgrader lists the assignments."""
    from playwright.sync_api import expect

    page.goto(server.url("lab"))
    expect(page.locator(NBGRADER_MENU)).to_have_count(1)
    expect(page.locator(CREATE_ASSIGNMENT_TAB)).to_have_count(1)

    # nbgrader lists the folders of the source directory, solutions/, with or without a
    # gradebook entry.
    page.goto(server.url("formgrader"))
    table = page.locator("#main_table, table").first
    for assignment in ASSIGNMENTS:
        expect(page.get_by_text(assignment, exact=True).first).to_be_visible(timeout=PAGE_MS)
    assert table.is_visible()
    shot(page, "formgrader.png")
    timings["formgrader listed"] = time.perf_counter() - started
