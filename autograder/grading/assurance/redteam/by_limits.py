"""The red team's cheats stopped by grading's limits: time, memory, processes."""

import autograder.grading.assurance.redteam.cheat_code as code
from autograder.grading.assurance.cohort import BLANK
from autograder.grading.assurance.redteam.cheat import (
    DETACHED_SECONDS,
    Cheat,
    detached_alive,
    in_cell,
)
from autograder.grading.course.grading_status import Status

CHEATS: tuple[Cheat, ...] = (
    Cheat(
        "cheat-infinite-loop",
        "an exercise cell that never returns",
        BLANK,
        in_cell("scalar", "", "while True:\n    pass"),
        honest_points=0,
        status=Status.TIMEOUT,
        defence="limits",
    ),
    Cheat(
        "cheat-memory-bomb",
        "an exercise cell that allocates memory until something gives",
        BLANK,
        in_cell("scalar", "", "hoard = []\nwhile True:\n    hoard.append(bytearray(10**8))"),
        honest_points=0,
        # On a loaded machine the cell timeout can come before the memory limit.
        status=f"{Status.MEMORY} or {Status.TIMEOUT}",
        defence="limits",
    ),
    Cheat(
        "cheat-kernel-exit",
        "kills its own kernel with os._exit",
        BLANK,
        in_cell("scalar", "", "import os\nos._exit(1)"),
        honest_points=0,
        status=Status.KERNEL_DIED,
        defence="limits",
    ),
    Cheat(
        "cheat-detached-process",
        "leaves a detached process (own session, double fork, no environment) running",
        BLANK,
        in_cell("scalar", "", code.DETACHED_PROCESS.format(seconds=DETACHED_SECONDS)),
        honest_points=0,
        defence="limits",
        flags=frozenset({"runtime-process"}),
        harm=detached_alive,
    ),
    Cheat(
        "cheat-stop-worker",
        "stops (SIGSTOP) the grading worker that runs its kernel",
        BLANK,
        in_cell("scalar", "", code.STOP_WORKER),
        honest_points=0,
        status=Status.TIMEOUT,
        defence="limits",
        flags=frozenset({"runtime-process"}),
        sandboxed=(Status.GRADED, frozenset({"runtime-process"})),
    ),
    Cheat(
        "cheat-kill-worker",
        "kills the grading worker that runs its kernel",
        BLANK,
        in_cell("scalar", "", code.KILL_WORKER),
        honest_points=0,
        status=Status.KERNEL_DIED,
        defence="limits",
        flags=frozenset({"runtime-process"}),
        sandboxed=(Status.GRADED, frozenset({"runtime-process"})),
    ),
)
