"""Do feedback pages run none of the student's markup, and still show their work?

The payloads (``feedback_payloads``) change the page's title and write to it when they
run. Unit tests check the sanitiser and the output cleaning; a page of nbgrader's feedback
template is checked statically; in headless Chromium (Debian's, as ``test_browser``), the
page nbgrader's own exporter makes is taken over by them (so they are live) and the one
``autograd-course feedback`` writes after a real grading is not, math, tables, images and
code still there.
"""

import html.parser
import time

import nbformat
import pytest
from browser_helpers import chromium
from feedback_payloads import (
    CODE,
    RUN,
    payload_code,
    payload_notebook,
    payload_outputs,
    png_base64,
    render_page,
)
from nbconvert.exporters import HTMLExporter
from tiny_course import ASSIGNMENT, tiny_course

from autograder.grading.authoring.i18n.feedback import LocalizedFeedbackExporter
from autograder.grading.cli import main
from autograder.grading.course.nbgrader_workspace import run_nbgrader
from autograder.grading.course.repo_paths import REPO_ROOT, notebook_path
from autograder.grading.pipeline.feedback.exporter import (
    EXPORTER_PATH,
    FeedbackExporter,
    exporter_options,
)
from autograder.grading.pipeline.feedback.safe_html import clean_html
from autograder.grading.pipeline.feedback.sanitize_markup import REMOVED_NOTE, clean_output

# The page's own scripts: MathJax from its CDN and its configuration.
TEMPLATE_SCRIPTS = ("https://cdnjs.cloudflare.com/ajax/libs/mathjax/", "text/x-mathjax-config")


@pytest.mark.parametrize(
    ("markup", "kept"),
    [
        ("<script>alert(1)</script>ok", "ok"),
        ('<img src="x" onerror="alert(1)">', '<img src="x">'),
        ('<a href="javascript:alert(1)">a</a>', '<a rel="noopener noreferrer">a</a>'),
        ('<a href="data:text/html,<script>x</script>">d</a>', '<a rel="noopener noreferrer">d</a>'),
        ('<img src="data:text/html;base64,PHM+">', "<img>"),
        ("<svg onload=alert(1)></svg><iframe srcdoc=x></iframe><style>*{}</style>", ""),
        ('<p style="background:url(//x)">p</p>', "<p>p</p>"),
        ("<p>$a&lt;b$ and \\(x^2\\)</p>", "<p>$a&lt;b$ and \\(x^2\\)</p>"),
        ('<img src="data:image/png;base64,iVBO">', '<img src="data:image/png;base64,iVBO">'),
        ('<table class="dataframe"><tr><td>1</td></tr></table>', "<tbody><tr><td>1</td>"),
    ],
)
def test_clean_html_keeps_content_and_drops_what_runs(markup, kept):
    assert kept in clean_html(markup)


def test_outputs_lose_scripts_and_unquoted_sizes():
    outputs = payload_outputs()
    for output in outputs:
        clean_output(output)
    html_data, js, _, markdown, _, png, honest_svg = (o.data for o in outputs)
    assert "onerror" not in html_data["text/html"] and "<script" not in html_data["text/html"]
    assert '<table class="dataframe">' in html_data["text/html"]
    assert js == {"text/plain": REMOVED_NOTE}
    assert outputs[4].metadata == {"image/png": {}}  # the width that was an attribute
    assert png["image/png"] == png_base64() and "image/svg+xml" in honest_svg
    assert "onerror" in markdown["text/markdown"], "markdown is cleaned once rendered"
    notebook = payload_notebook()
    notebook.metadata["widgets"] = {"state": {}}
    FeedbackExporter().from_notebook_node(notebook)
    assert notebook.metadata["widgets"] == {"state": {}}, "the notebook itself is left alone"


class Elements(html.parser.HTMLParser):
    """Every start tag of a page with its attributes, and each script's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data):
        if self.tags and self.tags[-1][0] == "script":
            self.scripts.append(data)


def live_markup(page: str) -> list[str]:
    """What in a page could run code that is not the template's own."""
    elements = Elements()
    elements.feed(page)
    found = []
    for tag, attrs in elements.tags:
        found += [f"{tag} {name}=" for name in attrs if name.startswith("on")]
        found += [f"{tag} {k}={v[:30]}" for k, v in attrs.items() if "javascript:" in v.lower()]
        if tag in ("iframe", "svg", "object", "embed"):
            found.append(tag)
        if tag == "script" and not any(s in str(attrs) for s in TEMPLATE_SCRIPTS):
            found.append(f"script {attrs}")
    found += [s[:40] for s in elements.scripts if "PWNED" in s]
    return found


@pytest.mark.parametrize("exporter", [FeedbackExporter, LocalizedFeedbackExporter])
def test_a_feedback_page_has_no_live_student_markup(exporter):
    assert len(live_markup(render_page(payload_notebook(), HTMLExporter))) >= 8, "live before"
    if exporter is LocalizedFeedbackExporter:
        page = render_page(payload_notebook(), lambda **kw: exporter(language="es", **kw))
        assert 'lang="es"' in page
    else:
        page = render_page(payload_notebook(), exporter)
    assert live_markup(page) == []
    for kept in (r"\frac{\partial L}{\partial w}", "$a&lt;b$", "<td>0.25</td>", "answer"):
        assert kept in page
    assert page.count(f"data:image/png;base64,{png_base64()}") == 3


def test_the_feedback_command_always_uses_the_clean_exporter(tmp_path):
    bare = tmp_path / "nbgrader_config.py"
    bare.write_text("c = get_config()  # noqa: F821\n")
    assert exporter_options(bare) == [f"--GenerateFeedback.exporter_class={EXPORTER_PATH}"]
    plain = tmp_path / "plain" / "nbgrader_config.py"
    plain.parent.mkdir()
    plain.write_text(
        "c = get_config()  # noqa: F821\n"
        "c.GenerateFeedback.exporter_class = 'nbconvert.exporters.HTMLExporter'\n"
    )
    assert exporter_options(plain) == [f"--GenerateFeedback.exporter_class={EXPORTER_PATH}"]
    assert exporter_options(REPO_ROOT / "nbgrader_config.py") == []
    assert exporter_options(REPO_ROOT / "i18n" / "es" / "nbgrader_config.py") == []


def student_notebook(release: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The release with the answer displaying every payload, and a markdown and a raw cell
    of payloads added by the student."""
    notebook = payload_notebook()
    markdown, raw = notebook.cells[0], notebook.cells[1]
    release.cells[1].source = payload_code()
    release.cells[1:1] = [markdown, raw]
    return release


@pytest.fixture
def chromium_page():
    """A headless Chromium page that loads local files only (the CDN's MathJax is refused:
    the math is checked as the text MathJax reads)."""

    with chromium("feedback page test") as browser:

        def open_page(path):
            page = browser.new_page()
            local = lambda route: (  # noqa: E731
                route.continue_() if route.request.url.startswith("file:") else route.abort()
            )
            page.route("**/*", local)
            page.goto(path.as_uri())
            page.wait_for_timeout(500)  # an onerror or ontoggle fires after the load
            return page

        yield open_page


@pytest.mark.slow
def test_a_graded_feedback_page_in_chromium_runs_no_student_markup(chromium_page, tmp_path):
    started = time.perf_counter()
    root = tiny_course(tmp_path / "tiny")
    release = nbformat.read(notebook_path(root / "release", ASSIGNMENT), 4)
    target = notebook_path(root / "submitted" / "mallory", ASSIGNMENT)
    target.parent.mkdir(parents=True)
    nbformat.write(student_notebook(release), target)
    run_nbgrader(root, "autograde", ASSIGNMENT)
    assert main(["feedback", ASSIGNMENT, "--root", str(root)]) == 0
    feedback = notebook_path(root / "feedback" / "mallory", ASSIGNMENT).with_suffix(".html")

    # the same student's notebook through nbgrader's own exporter: the payloads are live
    graded = nbformat.read(notebook_path(root / "autograded" / "mallory", ASSIGNMENT), 4)
    for cell in graded.cells:  # the scores nbgrader's GetGrades would add from the gradebook
        cell.metadata.get("nbgrader", {}).setdefault("score", 0)
    before = tmp_path / "before.html"
    before.write_text(render_page(graded, HTMLExporter))
    page = chromium_page(before)
    assert page.title() == "PWNED" and page.locator(".pwned").count() >= 5

    page = chromium_page(feedback)
    assert page.title() == ASSIGNMENT, "the page's title is nbgrader's, unchanged"
    assert page.locator(".pwned").count() == 0 and "PWNED" not in page.title()
    assert page.locator("script:not([src]):not([type='text/x-mathjax-config'])").count() == 0
    text = page.inner_text("#notebook-container")
    assert r"\frac{\partial L}{\partial w}" in text and "$a<b$" in text
    assert page.locator("table.dataframe td", has_text="0.25").count() == 1
    assert page.locator("table td", has_text="2").count() >= 1  # the markdown table
    sizes = page.evaluate("[...document.images].map(i => [i.alt, i.naturalWidth])")
    assert [alt for alt, width in sizes if width == 4].count("dot") == 1
    assert sum(1 for _, width in sizes if width == 4) == 3  # attachment, inline, figure
    assert sum(1 for _, width in sizes if width == 20) == 1  # the honest SVG, as an image
    assert CODE in page.inner_text("#notebook-container")
    assert RUN in page.inner_text("#notebook-container"), "the student's code, shown as text"
    print(
        f"graded, feedback written and both pages checked in {time.perf_counter() - started:.0f} s"
    )
