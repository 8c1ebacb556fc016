"""Independently written solutions, as student notebooks, for the similarity tests.

Each file of ``tests/fixtures/independent_NN/`` (01 and 09) is one student's answers to
notebook NN, written apart from the reference and from each other (09's by students who
had only its release). A section ``# %% GRADE_ID`` (or ``# %% GRADE_ID N``)
replaces the N-th ``# YOUR CODE HERE`` stub of that solution cell, re-indented to the stub;
``# %% GRADE_ID end`` is appended to the cell (module-level helpers); ``# %% GRADE_ID cell``
is the whole cell (a student who rewrote the given code around the stub, too).
"""

import re
import textwrap
from pathlib import Path
from typing import Any

import nbformat

from autograder.grading.course.repo_paths import COURSE_DIR, SOLUTIONS_DIR, notebook_path

WORKED = "01-worked-example"
FIXTURES_DIR = Path(__file__).parent / "fixtures"
FIXTURES = FIXTURES_DIR / "independent_01"
STUB = re.compile(
    r"^(?P<indent>[ \t]*)# YOUR CODE HERE\n(?P=indent)raise NotImplementedError\(\)$", re.M
)
HEADER = re.compile(r"^# %% (?P<cell>\w+)(?: (?P<place>\d+|end|cell))?$")


def implementations(assignment: str = WORKED) -> list[Path]:
    """The fixture files of ``assignment``, one per independent student, sorted by name."""
    return sorted((FIXTURES_DIR / f"independent_{assignment[:2]}").glob("*.py"))


def read_sections(path: Path) -> dict[tuple[str, str], str]:
    """(grade_id, place) -> the section's code, dedented; place is "1", "2", "end" or "cell"."""
    sections: dict[tuple[str, str], list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text().splitlines():
        header = HEADER.match(line)
        if header:
            key = (header["cell"], header["place"] or "1")
            if key in sections:
                raise ValueError(f"{path.name}: section {key} twice")
            current = sections[key] = []
        elif current is not None:
            current.append(line)
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"{path.name}: code before the first section: {line!r}")
    return {key: textwrap.dedent("\n".join(lines)).strip("\n") for key, lines in sections.items()}


def fill_cell(grade_id: str, stub: str, sections: dict[tuple[str, str], str]) -> str:
    """The released cell ``stub`` as this student hands it in."""
    if (grade_id, "cell") in sections:
        return sections[grade_id, "cell"]
    count = 0

    def answer(match: re.Match) -> str:
        nonlocal count
        count += 1
        code = sections.get((grade_id, str(count)))
        if code is None:
            raise ValueError(f"no answer for stub {count} of {grade_id}")
        return textwrap.indent(code, match["indent"], lambda line: bool(line.strip()))

    filled = STUB.sub(answer, stub)
    wanted = {int(place) for cell, place in sections if cell == grade_id and place.isdigit()}
    if wanted - set(range(1, count + 1)):
        raise ValueError(f"{grade_id} has {count} stubs, answers for {sorted(wanted)}")
    end = sections.get((grade_id, "end"))
    return filled if end is None else f"{filled}\n\n\n{end}"


def student_notebook(path: Path, assignment: str = WORKED) -> nbformat.NotebookNode:
    """The release of ``assignment`` with every solution cell answered from the fixture."""
    sections = read_sections(path)
    notebook = nbformat.read(notebook_path(COURSE_DIR, assignment), as_version=4)
    answered = set()
    for cell in notebook.cells:
        nbgrader = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and nbgrader.get("solution"):
            cell.source = fill_cell(nbgrader["grade_id"], cell.source, sections)
            answered.add(nbgrader["grade_id"])
    unknown = {cell for cell, _ in sections} - answered
    if unknown:
        raise ValueError(f"{path.name}: no solution cell {sorted(unknown)}")
    return notebook


def run_graded_cells(
    notebook: nbformat.NotebookNode, assignment: str = WORKED, every_cell: bool = False
) -> dict[str, Any]:
    """Run ``notebook``'s graded cells in order, in one namespace, with the hidden tests.

    Each test cell is the source notebook's, hidden tests included, as nbgrader grades it;
    a failing check raises. Demonstration cells (unless ``every_cell``: a notebook whose
    checks use what they define) and the progress table are not run.
    """
    source = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    tests = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or grade_id == "progress" or not (grade_id or every_cell):
            continue
        code = tests.get(grade_id, cell.source)
        exec(compile(code, f"<{grade_id}>", "exec"), namespace)
    return namespace
