"""Feedback pages in the edition's language: nbgrader's HTML with its labels translated.

nbgrader's feedback template writes a few English labels around the student's notebook
("Score:", "Test cell", "Student's answer"...). A translated edition's nbgrader settings
make this exporter write the pages: nbgrader's own HTML, then each label, found only in
the markup the template puts around it (never in the notebook's content), replaced by its
translation from the checks' catalog (``tr``), and the page's ``lang`` set.
"""

from typing import Any

from nbconvert.exporters import HTMLExporter
from traitlets import Unicode

from autograder.checks import language as languages

# (English markup of nbgrader's feedback template, the same with {label} where the
# translated label goes, label). Each label is a catalog msgid: the tr() calls below list
# them for the extractor.
_LABELS = [
    ('">Test cell</a>', '">{label}</a>', "Test cell"),
    ('">Coding free-response</a>', '">{label}</a>', "Coding free-response"),
    ('">Written response</a>', '">{label}</a>', "Written response"),
    ('">Comment</a>', '">{label}</a>', "Comment"),
    ("(Score: ", "({label}: ", "Score"),
    ("\n      Score: ", "\n      {label}: ", "Score"),
    ('<a href="#top">(Top)</a>', '<a href="#top">({label})</a>', "Top"),
    ("nbgrader-label\">Student's answer<", 'nbgrader-label">{label}<', "Student's answer"),
    ("nbgrader-label\">Student's task<", 'nbgrader-label">{label}<', "Student's task"),
    ('nbgrader-label">Grade cell: <code>', 'nbgrader-label">{label}: <code>', "Grade cell"),
    ("<b>Comments:</b>", "<b>{label}:</b>", "Comments"),
    (">Late submission penalty (", ">{label} (", "Late submission penalty"),
]


def _extracted_labels() -> None:
    """The labels as tr() calls, so that the catalog extractor lists them (never called)."""
    for label in (
        languages.tr("Test cell"),
        languages.tr("Coding free-response"),
        languages.tr("Written response"),
        languages.tr("Comment"),
        languages.tr("Score"),
        languages.tr("Top"),
        languages.tr("Student's answer"),
        languages.tr("Student's task"),
        languages.tr("Grade cell"),
        languages.tr("Comments"),
        languages.tr("Late submission penalty"),
    ):
        del label


def translate_page(page: str, language: str) -> str:
    """A feedback page of nbgrader's template with its labels in ``language``."""
    if language == languages.ENGLISH:
        return page
    messages = languages.catalog(language)
    for english, pattern, label in _LABELS:
        page = page.replace(english, pattern.format(label=messages.get(label, label)))
    return page.replace("<html>", f'<html lang="{language}">', 1)


class LocalizedFeedbackExporter(HTMLExporter):
    """nbgrader's feedback HTML exporter, its labels in ``language``."""

    language = Unicode(languages.ENGLISH, help="language of the page's labels").tag(config=True)

    def from_notebook_node(self, nb: Any, resources: Any = None, **kw: Any) -> tuple[str, Any]:
        """nbgrader's page, then its labels translated."""
        output, resources = super().from_notebook_node(nb, resources, **kw)
        return translate_page(output, self.language), resources
