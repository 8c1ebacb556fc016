"""Feedback that runs none of the student's markup: HTML outputs cleaned, scripts dropped.

A student's notebook can display anything: ``display(HTML("<img onerror=...>"))``,
``Javascript(...)``, a widget, a raw HTML cell, or output metadata that nbconvert writes
into an unquoted ``width=`` attribute. Before the feedback page is written, every such
output is passed through the project's sanitiser (``safe_html``) or dropped when it can
only be script; markdown is cleaned after rendering, by the feedback exporter.
"""

from numbers import Real

from nbconvert.exporters.exporter import ResourcesDict
from nbconvert.preprocessors import Preprocessor
from nbformat.notebooknode import NotebookNode

from autograder.grading.pipeline.feedback.safe_html import clean_html

# Outputs that are nothing but code for the browser: no sanitiser can keep part of them.
SCRIPT_MIMETYPES = frozenset(
    {
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "text/javascript",
        "application/vnd.jupyter.widget-view+json",
        "application/vnd.jupyter.widget-state+json",
    }
)
REMOVED_NOTE = "[an output that runs script in the browser is not shown in feedback]"
# Output metadata nbconvert's template writes into attributes (``width=`` unquoted).
SIZE_KEYS = ("width", "height")


def _text(value: str | list[str]) -> str:
    """An output's text, which nbformat may store as a list of lines."""
    return "".join(value) if isinstance(value, list) else value


def clean_output(output: NotebookNode) -> None:
    """Clean one output in place: HTML sanitised, script outputs dropped, sizes numbers."""
    data = output.get("data")
    if not data:
        return
    for mimetype in [m for m in data if m in SCRIPT_MIMETYPES or m.endswith("javascript")]:
        del data[mimetype]
    if "text/html" in data:
        data["text/html"] = clean_html(_text(data["text/html"]))
    if not data:
        data["text/plain"] = REMOVED_NOTE
    metadata = output.get("metadata", {})
    # nbconvert reads a size from the mimetype's metadata, then from the output's own.
    for level in [metadata, *(m for m in metadata.values() if isinstance(m, dict))]:
        for key in SIZE_KEYS:
            if key in level and not _is_size(level[key]):
                del level[key]


def _is_size(value: object) -> bool:
    """A width or height the template can write unquoted: a plain non-negative number."""
    return isinstance(value, Real) and not isinstance(value, bool) and value >= 0


class SanitizeStudentMarkup(Preprocessor):
    """Clean every output and raw cell of a notebook before its feedback page is written."""

    def preprocess(
        self, nb: NotebookNode, resources: ResourcesDict
    ) -> tuple[NotebookNode, ResourcesDict]:
        """The notebook with its outputs and raw cells cleaned, widget state dropped."""
        # Widget state is written into the page as a script for the widget manager.
        nb.metadata.pop("widgets", None)
        return super().preprocess(nb, resources)

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        """Clean a raw cell's source (the template copies an HTML one verbatim), or a code
        cell's outputs."""
        if cell.cell_type == "raw":
            cell.source = clean_html(cell.source)
        for output in cell.get("outputs", []):
            clean_output(output)
        return cell, resources
