"""Feedback pages in the edition's language: nbgrader's HTML with its labels translated.

nbgrader's feedback template writes a few English labels around the student's notebook
("Score:", "Test cell", "Student's answer"...). A translated edition's nbgrader settings
make this exporter write the pages: nbgrader's own HTML, then each label, found only in
the markup the template puts around it (never in the notebook's content), replaced by its
translation from the checks' catalog (``tr``), and the page's ``lang`` set.
"""

from typing import Any

from traitlets import Unicode

from autograder.checks import language as languages
from autograder.checks.language import marked
from autograder.grading.pipeline.feedback.exporter import FeedbackExporter

# (English markup of nbgrader's feedback template, the same with {label} where the
# translated label goes, label: a catalog msgid).
_LABELS = [
    ('">Test cell</a>', '">{label}</a>', marked("Test cell")),
    ('">Coding free-response</a>', '">{label}</a>', marked("Coding free-response")),
    ('">Written response</a>', '">{label}</a>', marked("Written response")),
    ('">Comment</a>', '">{label}</a>', marked("Comment")),
    ("(Score: ", "({label}: ", marked("Score")),
    ("\n      Score: ", "\n      {label}: ", marked("Score")),
    ('<a href="#top">(Top)</a>', '<a href="#top">({label})</a>', marked("Top")),
    ("nbgrader-label\">Student's answer<", 'nbgrader-label">{label}<', marked("Student's answer")),
    ("nbgrader-label\">Student's task<", 'nbgrader-label">{label}<', marked("Student's task")),
    ('nbgrader-label">Grade cell: <code>', 'nbgrader-label">{label}: <code>', marked("Grade cell")),
    ("<b>Comments:</b>", "<b>{label}:</b>", marked("Comments")),
    (">Late submission penalty (", ">{label} (", marked("Late submission penalty")),
]


def translate_page(page: str, language: str) -> str:
    """A feedback page of nbgrader's template with its labels in ``language``."""
    if language == languages.ENGLISH:
        return page
    messages = languages.catalog(language)
    for english, pattern, label in _LABELS:
        page = page.replace(english, pattern.format(label=messages.get(label, label)))
    return page.replace("<html>", f'<html lang="{language}">', 1)


class LocalizedFeedbackExporter(FeedbackExporter):
    """nbgrader's feedback HTML exporter, student markup cleaned, its labels in ``language``."""

    language = Unicode(languages.ENGLISH, help="language of the page's labels").tag(config=True)

    def from_notebook_node(self, nb: Any, resources: Any = None, **kw: Any) -> tuple[str, Any]:
        """nbgrader's page, then its labels translated."""
        output, resources = super().from_notebook_node(nb, resources, **kw)
        return translate_page(output, self.language), resources
