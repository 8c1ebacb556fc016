"""Is a committed release still what the solutions give, judged by content (not by mtimes,
which a git clone resets)?

``tests/grading/authoring/test_release.py`` proves the committed release is byte for byte
what nbgrader's ``generate_assignment`` makes now, but that takes a workspace and minutes.
Handing a kit out needs a quick answer: cell for cell, the release must show what the
solution notebook holds, except where nbgrader changes it (a solution region becomes the
edition's answer stub, a hidden-test block disappears). Any other difference means
solutions/ changed after the release was made: `autograd-course release` is owed.
"""

import json
import re
from pathlib import Path
from typing import Any

from autograder.checks.hidden_tests import split_hidden_tests

# nbgrader's solution region: the lines from BEGIN SOLUTION to END SOLUTION, both included.
_SOLUTION_REGION = re.compile(
    r"^[^\n]*BEGIN SOLUTION[^\n]*\n.*?^[^\n]*END SOLUTION[^\n]*$", re.M | re.S
)


def _cells(path: Path) -> list[dict[str, Any]]:
    """The cells of a notebook file, each source as one string."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if not isinstance(cell["source"], str):
            cell["source"] = "".join(cell["source"])
    return cells


def _spec(cell: dict[str, Any]) -> dict[str, Any]:
    return cell.get("metadata", {}).get("nbgrader", {})


def _shows_outside_regions(solution: str, released: str) -> bool:
    """Whether ``released`` has every part of ``solution`` outside its solution regions, in
    order (the regions themselves become stubs, whose words depend on the edition)."""
    position = 0
    for kept in _SOLUTION_REGION.split(solution):
        found = released.find(kept.strip("\n"), position)
        if found < 0:
            return False
        position = found + len(kept.strip("\n"))
    return True


def cell_released(solution_cell: dict[str, Any], release_cell: dict[str, Any]) -> bool:
    """Whether ``release_cell`` is what nbgrader's release makes of ``solution_cell``."""
    spec = _spec(solution_cell)
    if solution_cell["cell_type"] != release_cell["cell_type"]:
        return False
    if spec.get("grade_id") != _spec(release_cell).get("grade_id"):
        return False
    source, released = solution_cell["source"], release_cell["source"]
    if spec.get("solution"):
        return _shows_outside_regions(source, released)
    if spec.get("grade"):
        return split_hidden_tests(source)[0].rstrip() == released.rstrip()
    return source == released


def stale_cells(solution: Path, release: Path) -> list[str]:
    """Where the release notebook ``release`` differs from what ``solution`` gives: one line
    each (empty when it is current)."""
    solution_cells, release_cells = _cells(solution), _cells(release)
    if len(solution_cells) != len(release_cells):
        return [f"{len(release_cells)} cells, the solution notebook has {len(solution_cells)}"]
    return [
        f"cell {number} ({_spec(ours).get('grade_id') or ours['cell_type']})"
        for number, (ours, theirs) in enumerate(
            zip(solution_cells, release_cells, strict=True), start=1
        )
        if not cell_released(ours, theirs)
    ]
