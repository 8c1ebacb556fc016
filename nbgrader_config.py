"""nbgrader configuration for this course, read by every nbgrader command run at the repo root.

The instructor version of each notebook (solutions and hidden tests) lives in solutions/;
the student release that nbgrader generates from it lives in course/.
"""

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import GetGrades

from autograder.grading.pipeline.feedback.clear_hidden_tests import ClearHiddenTestsInTestCells
from autograder.grading.pipeline.feedback.exporter import FeedbackExporter
from autograder.grading.pipeline.feedback.hide_tracebacks import HideHiddenTestTracebacks

c = get_config()  # noqa: F821 (injected by traitlets when it loads this file)

c.CourseDirectory.course_id = "autograd-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "course"
# No db_url: nbgrader's default is gradebook.db in the course root, an absolute path, so the
# formgrader (whose server runs in the home folder) opens the gradebook the commands fill.
# A relative "sqlite:///gradebook.db" is taken from the folder a process runs in instead.

# The term (term.toml in the course root): a release that would show the answers of an
# assignment still open is refused, by `nbgrader release_assignment`, the formgrader and
# `autograd-course release-assignment` alike (autograder/grading/authoring/scheduled_release.py).
c.ExchangeFactory.release_assignment = (
    "autograder.grading.authoring.scheduled_release.ScheduledRelease"
)

# A hand-in counts as student S's only when S's own account made it: the others (handed in
# under a classmate's name, an unreadable timestamp) are set aside in the inbound at collect,
# each with a line (autograder/grading/pipeline/integrity/owned_collect.py).
c.ExchangeFactory.collect = "autograder.grading.pipeline.integrity.owned_collect.OwnedCollect"

# A late hand-in loses points by the term's [late_policy] (term.toml; none by default),
# through nbgrader's own late-penalty step (autograder/grading/pipeline/late_policy.py).
c.AssignLatePenalties.plugin_class = "autograder.grading.pipeline.late_policy.TermLatePolicy"

# A check cell builds torch tensors on every device and may run a small training loop:
# give each cell two minutes before nbgrader interrupts it and records a timeout.
c.Execute.timeout = 120

# nbgrader scores a test cell 0 when anything reaches stderr. torch and NumPy print
# warnings there (deprecations, overflow in exp...) that say nothing about correctness,
# so outputs that are warnings are dropped before grading. Errors are not stderr text:
# a failing check raises, and that still scores 0.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"Warning"

# A student who deletes a test or solution cell gets it back at autograde (with a note),
# so the notebook is graded instead of failing as a whole.
c.OverwriteCells.add_missing_cells = True

# Feedback shows the student's notebook with scores, never the hidden tests: not their
# source, and not their lines quoted in a traceback (a failing one shows its message).
# Only test cells are searched for hidden tests: a student who types nbgrader's markers into
# an answer cell must not make feedback fail (nbgrader's ClearHiddenTests parses every cell).
c.GenerateFeedback.preprocessors = [
    GetGrades,
    HideHiddenTestTracebacks,
    ClearHiddenTestsInTestCells,
    CSSHTMLHeaderPreprocessor,
]

# Feedback pages run none of the student's markup: markdown, HTML and SVG outputs cleaned
# by a sanitiser, JavaScript outputs left out (autograder/grading/pipeline/feedback/exporter.py).
c.GenerateFeedback.exporter_class = FeedbackExporter

# The integrity scan (autograder/grading/pipeline/integrity/): when True, the tests of an
# exercise whose code it flags (torch imported, tests patched...) are set to 0 in the gradebook.
c.CourseIntegrity.zero_flagged_exercises = False
