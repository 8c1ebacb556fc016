"""The red team's cheats stopped by the sandbox: no course file, no autograd library, no engine."""

import autograder.grading.assurance.redteam.cheat_code as code
from autograder.grading.assurance.cohort import BLANK, REFERENCE
from autograder.grading.assurance.redteam.cheat import (
    HONEST_BUG,
    VICTIM,
    Cheat,
    file_changed,
    in_cell,
    with_wrong_power_rule,
)
from autograder.grading.course.grading_status import Status

# The reference engine reached by several routes: sandboxed, it is not there (nothing is
# gained); unsandboxed, each route is flagged and zeroing takes the points.
ENGINE_CHEATS: tuple[Cheat, ...] = tuple(
    Cheat(
        student,
        story,
        REFERENCE,
        with_wrong_power_rule("scalar", source),
        honest_points=2,
        defence="sandbox",
        flags=frozenset(flags),
        sandboxed=(Status.GRADED, frozenset()),
    )
    for student, story, source, flags in (
        (
            "cheat-engine-import",
            "the reference engine's power rule, imported under a built name",
            code.ENGINE_IMPORT,
            {"dynamic-code"},
        ),
        (
            "cheat-engine-through-checks",
            "the reference's Scalar taken from the checks' borrowing module",
            code.ENGINE_THROUGH_CHECKS,
            {"autograd-import"},
        ),
        (
            "cheat-engine-source",
            "the reference power rule's source asked of the checks and run",
            code.ENGINE_SOURCE_THROUGH_CHECKS,
            {"autograd-import", "dynamic-code"},
        ),
        (
            "cheat-engine-files",
            "the reference engine's files read from the package's folder and run",
            code.ENGINE_FILE,
            {"dynamic-code", "file-access"},
        ),
        (
            "cheat-solutions-folder",
            "the instructor's notebook found next to the package and its solution run",
            code.SOLUTIONS_FOLDER,
            {"dynamic-code", "file-access"},
        ),
    )
)

CHEATS: tuple[Cheat, ...] = (
    *ENGINE_CHEATS,
    Cheat(
        "cheat-append-config",
        "appends to the course's nbgrader_config.py (turning zeroing off for later runs)",
        BLANK,
        in_cell("scalar", "", code.APPEND_CONFIG),
        honest_points=0,
        defence="sandbox",
        flags=frozenset({"runtime-file"}),
        harm=file_changed("nbgrader_config.py"),
    ),
    Cheat(
        "cheat-overwrite-other",
        f"blanks {HONEST_BUG}'s submitted notebook on the course's disk",
        BLANK,
        in_cell("scalar", "", code.OVERWRITE_OTHER),
        honest_points=0,
        defence="sandbox",
        flags=frozenset({"runtime-file"}),
        harm=file_changed(VICTIM),
        sandboxed=(Status.GRADED, frozenset()),
    ),
)
