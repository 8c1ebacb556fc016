"""Keep the engine cells of the solution notebooks identical to the reference engine.

The reference engine (``autograder/engine/*.py``) is the final engine of the course. Each
file is split into chunks by ``# %% chunk: NAME`` lines, and a solution-notebook cell whose
metadata has ``"engine": {"chunk": "tensor.py:matmul"}`` shows that chunk as notebook NN
needs it. Comment lines in the chunk say how it renders:

- ``### BEGIN FROM 02`` ... ``### END FROM 02``: only in notebooks 02 and later (a feature
  that notebook introduces); ``### BEGIN BEFORE 02`` ... ``### END BEFORE 02``: only before.
- ``### BEGIN SOLUTION`` ... ``### END SOLUTION``: an exercise region wherever the cell is an
  exercise; with a number (``### BEGIN SOLUTION 03``) only in that notebook. In a cell with
  ``"given": true``, and for regions of other notebooks, the markers are dropped and the
  solved code is handed to the student.
"""

import re
from pathlib import Path

import nbformat

ENGINE_DIR = Path(__file__).parents[1] / "engine"
CHUNK_MARKER = re.compile(r"^# %% chunk: (?P<name>[\w-]+)\s*$")
DIRECTIVE = re.compile(
    r"^(?P<indent>\s*)### (?P<edge>BEGIN|END) (?P<kind>SOLUTION|FROM|BEFORE)(?: (?P<nn>\d\d))?\s*$"
)
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def read_chunks(module: Path) -> dict[str, str]:
    """Map each chunk name of an engine module to its source text (marker excluded)."""
    chunks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in module.read_text().splitlines():
        match = CHUNK_MARKER.match(line)
        if match:
            if match["name"] in chunks:
                raise ValueError(f"{module.name}: chunk {match['name']!r} appears twice")
            current = chunks[match["name"]] = []
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip("\n") for name, lines in chunks.items()}


def render(source: str, notebook: int, exercise: bool) -> str:
    """The chunk as notebook ``notebook`` shows it: nbgrader markers where it is an exercise."""
    kept: list[str] = []
    hiding: list[bool] = []  # one entry per open FROM/BEFORE region: does it hide its lines?
    for line in source.splitlines():
        match = DIRECTIVE.match(line)
        if not match:
            if not any(hiding):
                kept.append(line)
            continue
        kind, number = match["kind"], int(match["nn"]) if match["nn"] else None
        if kind in ("FROM", "BEFORE"):
            if number is None:
                raise ValueError(f"{line.strip()!r} needs a notebook number")
            if match["edge"] == "BEGIN":
                hiding.append(notebook < number if kind == "FROM" else notebook >= number)
            elif not hiding:
                raise ValueError(f"{line.strip()!r} closes no open region")
            else:
                hiding.pop()
        elif exercise and number in (None, notebook) and not any(hiding):
            kept.append(f"{match['indent']}### {match['edge']} SOLUTION")
    if hiding:
        raise ValueError("a FROM/BEFORE region is never closed")
    return "\n".join(_tidy_blank_lines(_merge_touching_regions(kept))).strip("\n")


def _tidy_blank_lines(lines: list[str]) -> list[str]:
    """At most one blank line inside a block and two at the top level, as the formatter
    would leave them; dropping hidden regions can leave longer runs behind."""
    tidy: list[str] = []
    blanks = 0
    for line in lines:
        if not line.strip():
            blanks += 1
            continue
        allowed = 1 if line[:1].isspace() else 2
        tidy.extend([""] * min(blanks, allowed))
        tidy.append(line)
        blanks = 0
    return tidy


def _merge_touching_regions(lines: list[str]) -> list[str]:
    """Join two solution regions that became adjacent once hidden lines were dropped.

    Otherwise nbgrader would put two stubs in a row, the second at a deeper indentation.
    """
    merged: list[str] = []
    for line in lines:
        if (
            line.strip() == "### BEGIN SOLUTION"
            and merged
            and merged[-1].strip() == "### END SOLUTION"
        ):
            merged.pop()
            continue
        merged.append(line)
    return merged


def chunk_source(reference: str, notebook: int = 99, given: bool = False) -> str:
    """Chunk ``"module.py:chunk"`` as notebook ``notebook`` shows it (solved if ``given``)."""
    module_name, _, chunk_name = reference.partition(":")
    module = ENGINE_DIR / module_name
    if not module.is_file():
        raise ValueError(f"engine chunk {reference!r}: no module {module}")
    chunks = read_chunks(module)
    if chunk_name not in chunks:
        raise ValueError(f"engine chunk {reference!r}: {module_name} has {sorted(chunks)}")
    return render(chunks[chunk_name], notebook, exercise=not given)


def strip_solution_markers(source: str) -> str:
    """The source without nbgrader's solution delimiters: the code as a solver typed it."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS)


def notebook_number(path: Path) -> int:
    """The course position of a notebook from its name: ``02-how-it-works.ipynb`` -> 2."""
    match = re.match(r"(\d\d)-", path.name)
    if not match:
        raise ValueError(f"{path.name}: notebook names start with their number, like 02-...")
    return int(match[1])


def sync_notebook(path: Path, write: bool = True) -> list[str]:
    """Rewrite the engine cells of one notebook; return the chunks that had drifted."""
    notebook = nbformat.read(path, as_version=4)
    number = notebook_number(path)
    drifted = []
    for cell in notebook.cells:
        spec = cell.get("metadata", {}).get("engine")
        if cell.cell_type != "code" or not spec:
            continue
        expected = chunk_source(spec["chunk"], number, given=spec.get("given", False))
        if cell.source != expected:
            drifted.append(spec["chunk"])
            cell.source = expected
    if drifted and write:
        nbformat.write(notebook, path)
    return drifted
