"""Keep the engine cells of the solution notebooks identical to the reference engine.

A code cell whose metadata has ``"engine": {"chunk": "tensor.py:unbroadcast"}`` shows that
chunk of ``autograder/engine/tensor.py``. With ``"given": true`` the cell is handed to the
student already solved, so the nbgrader solution markers are dropped from it.
"""

import re
from pathlib import Path

import nbformat

ENGINE_DIR = Path(__file__).parent / "engine"
CHUNK_MARKER = re.compile(r"^# %% chunk: (?P<name>[\w-]+)\s*$")
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


def chunk_source(reference: str, given: bool = False) -> str:
    """Source of the chunk named ``"module.py:chunk"``, without solution markers if given."""
    module_name, _, chunk_name = reference.partition(":")
    module = ENGINE_DIR / module_name
    if not module.is_file():
        raise ValueError(f"engine chunk {reference!r}: no module {module}")
    chunks = read_chunks(module)
    if chunk_name not in chunks:
        raise ValueError(f"engine chunk {reference!r}: {module_name} has {sorted(chunks)}")
    source = chunks[chunk_name]
    return strip_solution_markers(source) if given else source


def strip_solution_markers(source: str) -> str:
    """The source without nbgrader's solution delimiters: the code as a solver typed it."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS)


def sync_notebook(path: Path, write: bool = True) -> list[str]:
    """Rewrite the engine cells of one notebook; return the chunks that had drifted."""
    notebook = nbformat.read(path, as_version=4)
    drifted = []
    for cell in notebook.cells:
        spec = cell.get("metadata", {}).get("engine")
        if cell.cell_type != "code" or not spec:
            continue
        expected = chunk_source(spec["chunk"], given=spec.get("given", False))
        if cell.source != expected:
            drifted.append(spec["chunk"])
            cell.source = expected
    if drifted and write:
        nbformat.write(notebook, path)
    return drifted
