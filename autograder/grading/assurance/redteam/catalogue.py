"""Every cheat of the red team, grouped by the defence that stops it (one module each)."""

from autograder.grading.assurance.redteam import (
    by_audit,
    by_checks,
    by_limits,
    by_sandbox,
    by_scan,
    by_trusted,
)
from autograder.grading.assurance.redteam.cheat import DEFENCES, Cheat

BY_DEFENCE: dict[str, tuple[Cheat, ...]] = {
    "scan": by_scan.CHEATS,
    "audit": by_audit.CHEATS,
    "limits": by_limits.CHEATS,
    "checks": by_checks.CHEATS,
    "sandbox": by_sandbox.CHEATS,
    "trusted": by_trusted.CHEATS,
}
assert tuple(BY_DEFENCE) == DEFENCES, "one module per defence, in DEFENCES order"
CHEATS: tuple[Cheat, ...] = tuple(cheat for group in BY_DEFENCE.values() for cheat in group)


def misplaced(by_defence: dict[str, tuple[Cheat, ...]] = BY_DEFENCE) -> list[str]:
    """Cheats filed under a defence that is not theirs (``student: filed -> own``)."""
    return [
        f"{cheat.student}: {defence} -> {cheat.defence}"
        for defence, group in by_defence.items()
        for cheat in group
        if cheat.defence != defence
    ]
