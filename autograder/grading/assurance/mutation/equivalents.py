"""The hand-kept list of equivalent mutants: ones that cannot change what the code does.

``equivalent.txt`` (next to this module) has one mutant a line: its id, then a one-line
reason (``# ...`` lines are comments). A listed mutant that survives counts as equivalent,
not as a survivor; one that is killed is reported (the list is wrong about it). Ids that
name no mutant any more are reported too, so the list does not silently go stale.
"""

from pathlib import Path

EQUIVALENTS_FILE = Path(__file__).with_name("equivalent.txt")


def read_equivalents(path: Path = EQUIVALENTS_FILE) -> dict[str, str]:
    """mutant id -> why it is equivalent; a line without a reason is an error."""
    equivalents = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        mutant_id, _, reason = line.partition(" ")
        if not reason.strip():
            raise ValueError(f"{path.name}:{number}: {mutant_id} needs a one-line reason")
        equivalents[mutant_id] = reason.strip()
    return equivalents
