"""Keep the engine cells of the solution notebooks identical to the reference engine.

The reference engine (``autograder/engine/*.py``) is the final engine of the course. Each
file is split into chunks by ``# %% chunk: NAME`` lines, and a solution-notebook cell whose
metadata has ``"engine": {"chunk": "tensor.py:matmul"}`` shows that chunk as notebook NN
needs it:

- ``# %% chunk: NAME from 02`` is a later part of chunk NAME, shown from notebook 02 on (the
  feature that notebook adds, as whole definitions: a subclass keeping the class's name, a
  new function). The cell shows the chunk's parts up to its notebook, in the module's order.
- ``### BEGIN SOLUTION`` ... ``### END SOLUTION``: an exercise region wherever the cell is an
  exercise; with a number (``### BEGIN SOLUTION 03``) only in that notebook. In a cell with
  ``"given": true``, and for regions of other notebooks, the markers are dropped and the
  solved code is handed to the student.
"""

import re
from pathlib import Path

import nbformat

ENGINE_DIR = Path(__file__).parents[2] / "engine"
CHUNK_MARKER = re.compile(r"^# %% chunk: (?P<name>[\w-]+)(?: from (?P<nn>\d\d))?\s*$")
DIRECTIVE = re.compile(
    r"^(?P<indent>\s*)### (?P<edge>BEGIN|END) (?P<kind>\w+)(?: (?P<nn>\d\d))?\s*$"
)
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def read_chunks(module: Path) -> dict[str, list[tuple[int, str]]]:
    """Map each chunk name of an engine module to its parts: (first notebook, source text).

    The first part of a chunk has no ``from NN`` and counts as notebook 0; later parts come in
    the module's order, each from a later notebook than the one before it.
    """
    chunks: dict[str, list[tuple[int, list[str]]]] = {}
    current: list[str] | None = None
    for line in module.read_text().splitlines():
        match = CHUNK_MARKER.match(line)
        if not match:
            if current is not None:
                current.append(line)
            continue
        name, first = match["name"], int(match["nn"] or 0)
        parts = chunks.setdefault(name, [])
        if not parts and first:
            raise ValueError(f"{module.name}: chunk {name!r} starts with a part 'from {first:02}'")
        if parts and first <= parts[-1][0]:
            raise ValueError(
                f"{module.name}: chunk {name!r} has a part from notebook {first:02} "
                "at or before an earlier part's notebook"
            )
        current = []
        parts.append((first, current))
    return {
        name: [(first, "\n".join(lines).strip("\n")) for first, lines in parts]
        for name, parts in chunks.items()
    }


def render(source: str, notebook: int, exercise: bool) -> str:
    """One part as notebook ``notebook`` shows it: nbgrader markers where it is an exercise."""
    kept: list[str] = []
    for line in source.splitlines():
        match = DIRECTIVE.match(line)
        if not match:
            kept.append(line)
            continue
        if match["kind"] != "SOLUTION":
            raise ValueError(f"{line.strip()!r}: engine chunks know only SOLUTION regions")
        number = int(match["nn"]) if match["nn"] else None
        if exercise and number in (None, notebook):
            kept.append(f"{match['indent']}### {match['edge']} SOLUTION")
    return "\n".join(kept).strip("\n")


def chunk_source(reference: str, notebook: int = 99, given: bool = False) -> str:
    """Chunk ``"module.py:chunk"`` as notebook ``notebook`` shows it (solved if ``given``)."""
    module_name, _, chunk_name = reference.partition(":")
    module = ENGINE_DIR / module_name
    if not module.is_file():
        raise ValueError(f"engine chunk {reference!r}: no module {module}")
    chunks = read_chunks(module)
    if chunk_name not in chunks:
        raise ValueError(f"engine chunk {reference!r}: {module_name} has {sorted(chunks)}")
    shown = [
        render(source, notebook, exercise=not given)
        for first, source in chunks[chunk_name]
        if first <= notebook
    ]
    return "\n\n\n".join(shown)


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
