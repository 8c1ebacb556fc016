"""The red team: cheating submissions graded in one run with honest ones.

Each cheat is a real notebook a student could hand in for 00-recipe (the quickest notebook
to grade), or for another notebook when it needs what only that one has (02-how-it-works:
checks that lend the reference's other exercises): the blank release or the reference
solution with a cheat planted in it. One ``autograde`` run per notebook grades them
together with honest students; the integrity scan runs next to it, outside the kernels. A
cheat passes the red team when it earns no more than its honest work deserves, or when the
scan flags it (and zeroing then takes the points away); crashes and hangs must end with the
expected status and leave the others untouched, and no cheat may leave lasting harm (a
changed course file, a process still running).

Each cheat names the defence that stops it (one of ``DEFENCES``), shown in its row, and is
filed in that defence's module: ``by_scan``, ``by_audit``, ``by_limits``, ``by_checks``,
``by_sandbox``, ``by_trusted`` (``catalogue`` gathers them). ``cheat`` holds what cheats are
made of, ``cheat_code`` the code they plant, ``run`` the grading of them all.
"""

from autograder.grading.assurance.redteam.catalogue import BY_DEFENCE, CHEATS
from autograder.grading.assurance.redteam.cheat import DEFENCES, HONEST_BUG, Cheat, in_cell
from autograder.grading.assurance.redteam.run import (
    HONEST,
    RedTeamResult,
    RedTeamRow,
    format_red_team,
    main,
    run_red_team,
)

__all__ = [
    "BY_DEFENCE",
    "CHEATS",
    "DEFENCES",
    "HONEST",
    "HONEST_BUG",
    "Cheat",
    "RedTeamResult",
    "RedTeamRow",
    "format_red_team",
    "in_cell",
    "main",
    "run_red_team",
]
