"""The integrity scan: does a submitted notebook's own code try to beat the tests?

The scan runs in the trusted grading process and never executes student code: it reads
each submission with nbformat and walks the code with ``ast``. It looks only at cells the
student could have changed (nbgrader solution cells, and cells the student added or edited);
locked cells are restored from the source at autograde and legitimately import torch.

A flag is evidence for an instructor to read, not a verdict. Optionally
(``c.CourseIntegrity.zero_flagged_exercises = True`` in nbgrader_config.py) the tests of a
flagged exercise are set to 0 in the gradebook, with a comment saying why.

Modules: ``flags`` (what is reported), ``cells``, ``locked`` and ``notebook_names`` (reading
a notebook), ``syntax`` and ``scanner`` (reading code), one ``*_rule`` module per rule,
``code_rules`` (one cell), ``scan`` (whole submissions), ``zeroing`` (the gradebook),
``record`` (the scan as a grading step).
"""

from autograder.grading.pipeline.integrity.flags import (
    CHEATING_RULES,
    RULES,
    Flag,
    read_flags,
    write_flags,
)
from autograder.grading.pipeline.integrity.record import FLAGS_NAME, record_flags, scan_assignment
from autograder.grading.pipeline.integrity.scan import scan_notebook, scan_submissions
from autograder.grading.pipeline.integrity.zeroing import (
    CourseIntegrity,
    zero_flagged_exercises,
    zero_flagged_setting,
)

__all__ = [
    "CHEATING_RULES",
    "FLAGS_NAME",
    "RULES",
    "CourseIntegrity",
    "Flag",
    "read_flags",
    "record_flags",
    "scan_assignment",
    "scan_notebook",
    "scan_submissions",
    "write_flags",
    "zero_flagged_exercises",
    "zero_flagged_setting",
]
