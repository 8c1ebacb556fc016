"""nbgrader's feedback HTML exporter, with the student's markup cleaned.

nbgrader's feedback template renders markdown cells (and the instructor's comments) with
``markdown2html`` and no sanitising, whatever ``HTMLExporter.sanitize_html`` says; nbconvert's
own ``clean_html`` covers only what the classic template passes through it. This exporter
cleans the rendered markdown itself, sends every ``clean_html`` of the template through the
project's sanitiser, cleans outputs and raw cells first (``SanitizeStudentMarkup``), and
always shows SVG as an image (where its scripts never run). The page's own scripts
(MathJax) are untouched, so the student's math still renders.
"""

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from traitlets import Bool
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item

from autograder.grading.pipeline.feedback.safe_html import clean_html
from autograder.grading.pipeline.feedback.sanitize_markup import SanitizeStudentMarkup

# The import path nbgrader's config takes (``--GenerateFeedback.exporter_class=...``).
EXPORTER_PATH = "autograder.grading.pipeline.feedback.exporter.FeedbackExporter"


class FeedbackExporter(HTMLExporter):
    """HTMLExporter whose pages run none of the student's markup."""

    # The classic template leaves JavaScript and widget outputs out when this is set.
    sanitize_html = Bool(True, help="always on in feedback").tag(config=True)

    @pass_context
    def markdown2html(self, context: Any, source: str) -> str:
        """nbconvert's markdown rendering (math kept as text for MathJax), then cleaned."""
        return clean_html(super().markdown2html(context, source))

    def default_filters(self) -> Iterator[tuple[str, Any]]:
        """nbconvert's filters, with ``clean_html`` the project's sanitiser."""
        yield from super().default_filters()
        yield ("clean_html", clean_html)

    def _init_resources(self, resources: Any) -> Any:
        """nbconvert's resources, with sanitising on whatever the config says."""
        resources = super()._init_resources(resources)
        resources["should_sanitize_html"] = True
        resources["should_not_encode_svg"] = False  # inline SVG could hold scripts
        return resources

    def from_notebook_node(self, nb: Any, resources: Any = None, **kw: Any) -> tuple[str, Any]:
        """The page of a copy of ``nb`` whose outputs and raw cells were cleaned first."""
        nb, resources = SanitizeStudentMarkup().preprocess(copy.deepcopy(nb), resources)
        return super().from_notebook_node(nb, resources, **kw)


def exporter_options(config_path: Path) -> list[str]:
    """nbgrader options that make ``generate_feedback`` use this exporter: none when the
    course's config already names it or a subclass (a translated edition's), else the
    option naming it, so a course root whose config predates it gets clean pages too."""
    config = PyFileConfigLoader(config_path.name, path=str(config_path.parent)).load_config()
    chosen = config.GenerateFeedback.get("exporter_class") if "GenerateFeedback" in config else None
    if isinstance(chosen, str):
        try:
            chosen = import_item(chosen)
        except (ImportError, AttributeError, ValueError):
            chosen = None
    if isinstance(chosen, type) and issubclass(chosen, FeedbackExporter):
        return []
    return [f"--GenerateFeedback.exporter_class={EXPORTER_PATH}"]
