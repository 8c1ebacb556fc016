"""The grading kernel's runtime record read back: events summed per cell and kind, then
charged to the notebook's cells and turned into flags (rules ``runtime-*``).

The kernel (``runtime_audit``) charges each event to a cell by its execution count; the
autograded notebook says which cell ran under which count, and the release which cells are
the student's. Events of the course's own cells (the tests, the given cells) are the
instructor's code and are dropped.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.grading.pipeline.integrity.autograd_rule import is_autograd_module
from autograder.grading.pipeline.integrity.cells import code_cells, student_cells
from autograder.grading.pipeline.integrity.flags import Flag

RECORD_NAME = "runtime-audit.jsonl"  # in the job folder, outside the notebook's folder
MAX_RECORD_BYTES = 4 << 20  # more than this is a flood of forged lines: read no further
DETAILS_SHOWN = 3  # details per (cell, kind) in a flag


@dataclass(frozen=True)
class RuntimeEvents:
    """Events of one kind charged to one cell (its execution count): how many, and the
    first few in detail with their lines."""

    cell: int
    kind: str
    count: int
    details: tuple[tuple[int, str], ...]  # (line in the cell, what happened)


@dataclass(frozen=True)
class RuntimeRecord:
    """One job's runtime record, summed up: plain data that travels back with the job."""

    started: bool  # the hook wrote its first line
    cells: tuple[int, ...]  # execution counts the hook saw start, in order
    events: tuple[RuntimeEvents, ...] = ()
    unreadable: int = 0  # lines the hook did not write (forged, or cut by a flood)
    problems: tuple[str, ...] = field(default_factory=tuple)


def read_record(path: Path) -> RuntimeRecord:
    """Sum up the record at ``path`` (an empty, unstarted record when it is missing)."""
    if not path.is_file():
        return RuntimeRecord(False, ())
    problems = []
    with path.open("rb") as stream:
        data = stream.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        problems.append(f"the record is over {MAX_RECORD_BYTES} bytes; read no further")
        data = data[:MAX_RECORD_BYTES]
    started, cells, unreadable = False, [], 0
    counts: dict[tuple[int, str], int] = {}
    details: dict[tuple[int, str], list[tuple[int, str]]] = {}
    for raw in data.splitlines():
        entry = _entry(raw)
        if entry is None:
            unreadable += 1
            continue
        kind, cell = entry["kind"], entry["cell"]
        if kind == "start":
            started = True
        elif kind == "cell":
            cells.append(cell)
            for key, total in entry.get("counts", {}).items():
                _merge_count(counts, key, total)
        else:
            key = (cell, kind)
            counts[key] = max(counts.get(key, 0), len(details.get(key, [])) + 1)
            details.setdefault(key, []).append((entry.get("line", 0), str(entry.get("detail"))))
    events = tuple(
        RuntimeEvents(cell, kind, count, tuple(details.get((cell, kind), ())))
        for (cell, kind), count in sorted(counts.items())
    )
    return RuntimeRecord(started, tuple(cells), events, unreadable, tuple(problems))


def _entry(raw: bytes) -> dict | None:
    """One line as the hook writes it, else None."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
        return None
    if type(entry.get("cell")) is not int or type(entry.get("line", 0)) is not int:
        return None
    return entry


def _merge_count(counts: dict[tuple[int, str], int], key: object, total: object) -> None:
    """A running count ("CELL KIND" -> n) from a cell line; the largest seen wins."""
    if not isinstance(key, str) or type(total) is not int:
        return
    cell, _, kind = key.partition(" ")
    if cell.isdigit():
        counts[(int(cell), kind)] = max(counts.get((int(cell), kind), 0), total)


def cell_labels(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode | None
) -> dict[int, str]:
    """Execution count -> label of the student's cell that ran under it (course cells left
    out): the labels the static scan gives."""
    labels = {cell.position: cell.label for cell in student_cells(notebook, release)}
    counts = {}
    for position, cell in code_cells(notebook):
        count = cell.get("execution_count")
        if type(count) is int and position in labels:
            counts[count] = labels[position]
    return counts


def in_run_order(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of a notebook that was not saved after running (its kernel died or was
    killed) with the execution counts its cells had: nbclient runs every non-empty code
    cell in order, counting from 1."""
    copy = nbformat.from_dict(notebook)
    count = 0
    for _, cell in code_cells(copy):
        if cell.source.strip():
            count += 1
            cell.execution_count = count
        else:
            cell.execution_count = None
    return copy


def last_execution_count(notebook: nbformat.NotebookNode) -> int:
    """The highest execution count of the notebook's cells (0 when none ran)."""
    counts = [c.get("execution_count") for _, c in code_cells(notebook)]
    return max([n for n in counts if type(n) is int], default=0)


def runtime_flags(
    record: RuntimeRecord,
    notebook: nbformat.NotebookNode,
    release: nbformat.NotebookNode | None,
    student: str,
    assignment: str,
    complete: bool = True,
) -> list[Flag]:
    """Flags for what the student's cells did at grading time, one per cell and kind.

    ``complete``: the notebook ran to its end (so the record must have seen every cell);
    False for a submitted notebook put ``in_run_order`` after its run was cut short."""
    labels = cell_labels(notebook, release)
    flags = []
    for events in record.events:
        label = labels.get(events.cell)
        if label is None:
            continue  # the course's own cells, or code outside any cell
        rule = "runtime-" + events.kind
        if events.kind == "import":
            names = [detail for _, detail in events.details]
            if any(is_autograd_module(name) for name in names):
                rule = "runtime-autograd"
        shown = "; ".join(f"line {line}: {what}" for line, what in events.details[:DETAILS_SHOWN])
        more = f" (and {events.count - DETAILS_SHOWN} more)" if events.count > DETAILS_SHOWN else ""
        first_line = events.details[0][0] if events.details else 0
        flags.append(Flag(student, assignment, label, first_line, rule, shown + more))
    flags += record_problems(record, notebook, labels, student, assignment, complete)
    return flags


def record_problems(
    record: RuntimeRecord,
    notebook: nbformat.NotebookNode,
    labels: dict[int, str],
    student: str,
    assignment: str,
    complete: bool = True,
) -> list[Flag]:
    """A flag when the record was cut short, forged or flooded: only the student's code
    could do that; charged to the last student cell the record saw run."""
    problems = list(record.problems)
    if not record.started:
        problems.append("the runtime record is missing its start: it was removed or truncated")
    ran = last_execution_count(notebook)
    seen = max(record.cells, default=0)
    if complete and ran > seen:
        problems.append(f"the record stops at cell In [{seen}], the notebook ran to In [{ran}]")
    if record.unreadable:
        problems.append(f"{record.unreadable} lines of the record were not the audit hook's")
    if not problems:
        return []
    before = [count for count in labels if count <= seen] or list(labels)
    label = labels[max(before)] if before else "notebook"
    return [Flag(student, assignment, label, 0, "runtime-record", "; ".join(problems))]
