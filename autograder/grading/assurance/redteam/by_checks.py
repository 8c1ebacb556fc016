"""The red team's cheats stopped by nbgrader's restored cells and the checks' own strictness."""

import autograder.grading.assurance.redteam.cheat_code as code
from autograder.grading.assurance.cohort import BLANK, REFERENCE
from autograder.grading.assurance.redteam.cheat import (
    POW_SOLVED,
    Cheat,
    in_cell,
    tamper_with_tests,
    with_wrong_power_rule,
)

CHEATS: tuple[Cheat, ...] = (
    Cheat(
        "cheat-hard-coded-answers",
        "the power rule as a table of the visible tests' answers",
        REFERENCE,
        in_cell(
            "scalar",
            POW_SOLVED,
            "derivative = {(1.5, 3): 6.75, (2.0, 2): 4.0, (-1.5, 2): -3.0}[(self.data, exponent)]",
        ),
        honest_points=2,  # the hidden tests' fresh draws are not in the table
        defence="checks",
    ),
    Cheat(
        "cheat-edit-locked-tests",
        "empties the test cells and deletes one",
        BLANK,
        tamper_with_tests,
        honest_points=0,
        flags=frozenset({"locked-cell-edited"}),
        defence="checks",
    ),
    Cheat(
        "cheat-check-defaults",
        "changes check_parity's keyword defaults (devices it cannot use)",
        REFERENCE,
        with_wrong_power_rule("scalar", code.CHECK_DEFAULTS),
        honest_points=2,
        defence="checks",
    ),
    Cheat(
        "cheat-lying-flags",
        "an engine whose every value and flag compares equal to anything",
        BLANK,
        in_cell("no_grad", "", code.LYING_FLAGS),
        honest_points=0,
        defence="checks",
    ),
    Cheat(
        "cheat-lying-numbers",
        "numbers that claim to equal anything",
        BLANK,
        in_cell("no_grad", "", code.LYING_NUMBERS),
        honest_points=0,
        defence="checks",
    ),
)
