"""nbgrader settings of the Spanish edition, loaded after the course's nbgrader_config.py.

The answer stubs students see in their cells, and feedback pages with Spanish labels.
"""

from autograder.grading.authoring.i18n.feedback import LocalizedFeedbackExporter

c = get_config()  # noqa: F821 (injected by traitlets when it loads this file)

c.ClearSolutions.code_stub = {"python": "# TU CÓDIGO AQUÍ\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "TU RESPUESTA AQUÍ"
c.GenerateFeedback.exporter_class = LocalizedFeedbackExporter
c.LocalizedFeedbackExporter.language = "es"
