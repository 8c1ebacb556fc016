"""The red team's cheats stopped by trusted verdicts: decided outside the student's kernel."""

import autograder.grading.assurance.redteam.cheat_code as code
from autograder.grading.assurance.cohort import REFERENCE
from autograder.grading.assurance.redteam.cheat import (
    LENDING,
    Cheat,
    answering_with_lent,
    torch_cheat,
    with_wrong_power_rule,
)
from autograder.grading.course.grading_status import Status

CHEATS: tuple[Cheat, ...] = (
    torch_cheat("cheat-torch-builtins-table", "trusted"),
    torch_cheat("cheat-torch-sys-modules", "trusted"),
    torch_cheat("cheat-torch-notebook-globals", "trusted"),
    Cheat(
        "cheat-tolerance-table",
        "widens the comparison's tolerance table to anything",
        REFERENCE,
        with_wrong_power_rule("scalar", code.TOLERANCE_TABLE),
        honest_points=2,
        defence="trusted",
    ),
    Cheat(
        "cheat-read-hidden-tests",
        "reads the hidden tests from the notebook file being graded",
        REFERENCE,
        with_wrong_power_rule("scalar", code.READ_HIDDEN_TESTS),
        honest_points=2,
        defence="trusted",
    ),
    Cheat(
        "cheat-keep-lent-parts",
        "keeps the reference's parts lent to its kernel for one check (02) and answers the "
        "other exercises with them",
        REFERENCE,
        answering_with_lent(code.KEEP_LENT),
        honest_points=1,  # its own next_functions; every other exercise is the kept one
        defence="trusted",
        assignment=LENDING,
    ),
    Cheat(
        "cheat-leave-lent-parts",
        "writes the reference's parts lent to a copy of its kernel (02) into symbolic links' "
        "targets in /tmp, and answers the other exercises with them",
        REFERENCE,
        answering_with_lent(code.LEAVE_LENT),
        honest_points=1,
        defence="trusted",
        assignment=LENDING,
        status=Status.GRADED,
        sandboxed=(Status.KERNEL_DIED, frozenset()),
    ),
    Cheat(
        "cheat-copy-process",
        "a process started by the copy of its kernel (02) waits until the copy is gone, then "
        "writes the lent parts into /tmp, and the other exercises answer with them",
        REFERENCE,
        answering_with_lent(code.LEAVE_LENT_LATER),
        honest_points=1,
        defence="trusted",
        assignment=LENDING,
        sandboxed=(Status.KERNEL_DIED, frozenset()),
    ),
    Cheat(
        "cheat-copy-writes-kernel",
        "the copy of its kernel (02) writes the lent parts into the stopped kernel's memory "
        "with process_vm_writev, and the other exercises answer with them",
        REFERENCE,
        answering_with_lent(code.WRITE_INTO_KERNEL),
        honest_points=1,
        defence="trusted",
        assignment=LENDING,
    ),
    Cheat(
        "cheat-flood-frames",
        "every reply on the verdict channel announces and sends 8 arrays of 200 MiB",
        REFERENCE,
        with_wrong_power_rule("scalar", code.FLOOD_FRAMES),
        honest_points=2,
        defence="trusted",
    ),
    Cheat(
        "cheat-call-home",
        "in the middle of a check, calls the trusted side itself: to evaluate the power rule, "
        "or any callback by number",
        REFERENCE,
        with_wrong_power_rule("scalar", code.CALL_HOME),
        honest_points=2,
        defence="trusted",
    ),
)
