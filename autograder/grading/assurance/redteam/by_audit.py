"""The red team's cheats stopped by the runtime record (what the kernel did), then zeroing."""

import autograder.grading.assurance.redteam.cheat_code as code
from autograder.grading.assurance.cohort import BLANK, REFERENCE
from autograder.grading.assurance.redteam.cheat import (
    Cheat,
    in_cell,
    torch_cheat,
    with_wrong_power_rule,
)
from autograder.grading.course.grading_status import Status

CHEATS: tuple[Cheat, ...] = (
    torch_cheat("cheat-torch-compiled-string", "audit", flags=frozenset({"runtime-code"})),
    torch_cheat("cheat-torch-exec-alias", "audit", flags=frozenset({"runtime-code"})),
    Cheat(
        "cheat-input-transformer",
        "an IPython input transformer turns every later check cell into `pass`",
        BLANK,
        in_cell("scalar", "", code.INPUT_TRANSFORMER),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-exception-handler",
        "a custom IPython exception handler silences every later failing check",
        BLANK,
        in_cell("scalar", "", code.EXCEPTION_HANDLER),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-trace-function",
        "a trace function replaces the checks in each later cell's globals as it starts",
        BLANK,
        in_cell("scalar", "", code.TRACE_FUNCTION),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-helper-code",
        "swaps the code of the comparison helper check_parity calls",
        REFERENCE,
        with_wrong_power_rule("scalar", code.HELPER_CODE),
        honest_points=2,
        defence="audit",
        flags=frozenset({"runtime-hook"}),
    ),
    Cheat(
        "cheat-job-gradebook-trigger",
        "plants a trigger in the job's gradebook that gives every test full marks",
        BLANK,
        in_cell("scalar", "", code.JOB_GRADEBOOK_TRIGGER),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-file"}),
    ),
    Cheat(
        "cheat-copy-other-submission",
        "finds the course folder and runs another student's solution cells",
        BLANK,
        in_cell("scalar", "", code.COPY_OTHER_SUBMISSION),
        honest_points=0,
        defence="audit",
        flags=frozenset({"runtime-file", "runtime-code"}),
        sandboxed=(Status.GRADED, frozenset()),
    ),
)
