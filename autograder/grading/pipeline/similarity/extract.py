"""What each student wrote: the lines of their solution cells that the release did not hold.

Only solution cells count (the given and locked cells are everyone's), and in them only
the lines that differ from the release's text of the same cell: a stub or signature
students were handed matches nobody. The reference is the source notebook's
``### BEGIN/END SOLUTION`` regions.
"""

import ast
import bisect
import difflib
import json
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path

import nbformat
from copydetect.utils import filter_code
from nbgrader.utils import is_solution

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


@dataclass(frozen=True)
class Document:
    """One author's code: the lines they wrote, each with the cell and line it came from."""

    author: str  # a student id, "reference", or "ARCHIVE/student"
    origin: str  # "cohort", "reference" or "archive"
    text: str
    lines: tuple[tuple[str, int], ...]  # per line of text: (grade_id, line in that cell)
    sources: tuple[str, ...] = ()  # the whole solution cells, for their syntax trees

    @cached_property
    def line_starts(self) -> list[int]:
        """The offset where each line of ``text`` starts."""
        return [0] + [i + 1 for i, char in enumerate(self.text) if char == "\n"]

    def origin_of(self, offset: int) -> tuple[str, int]:
        """(grade_id, 1-based line in its cell) of the character at ``offset``."""
        if not self.lines:
            return ("?", 0)
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return self.lines[min(max(index, 0), len(self.lines) - 1)]


@dataclass(frozen=True)
class Skipped:
    """An author left out of the comparison, with the reason in a line."""

    author: str
    reason: str


Part = tuple[str, list[int], list[str]]  # grade_id, line numbers, lines


def join_parts(author: str, origin: str, parts: list[Part]) -> Document:
    """A document from each cell's kept lines, in notebook order."""
    lines: list[str] = []
    origins: list[tuple[str, int]] = []
    for grade_id, numbers, texts in parts:
        lines += texts
        origins += [(grade_id, number) for number in numbers]
    return Document(author, origin, "\n".join(lines) + "\n", tuple(origins))


@lru_cache(maxsize=65536)
def normalised(line: str) -> str:
    """A line as copydetect compares it: identifiers one letter, no comments or spaces.

    The line diff below compares lines in this form, so a given line whose variables a
    student renamed, or whose quotes a formatter changed, is still the given line.
    """
    return filter_code(line.strip(), "line.py", "python")[0].strip()


def written_lines(source: str, given: str) -> tuple[list[int], list[str]]:
    """The lines of ``source`` that are not the handed-out ``given`` (a normalised line diff).

    Fingerprints straddling a given line and an answer would differ between two copies of
    one answer for no reason: only what the student typed is compared. Lines with no code
    (blank, comments only) are left out: they are never evidence.
    """
    mine = source.splitlines()
    ours = [normalised(line) for line in mine]
    theirs = [normalised(line) for line in given.splitlines()]
    matcher = difflib.SequenceMatcher(None, theirs, ours, autojunk=False)
    kept = [
        index
        for tag, _, _, start, end in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for index in range(start, end)
        if ours[index]
    ]
    return [n + 1 for n in kept], [mine[n] for n in kept]


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path``; ValueError with a one-line reason if it is not one."""
    try:
        raw = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path.name} is not UTF-8 ({error.reason})") from None
    if not raw.strip():
        raise ValueError(f"{path.name} is empty")
    try:
        notebook = nbformat.reads(raw, as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError):
        raise ValueError(f"{path.name} is not JSON: not a notebook") from None
    except Exception as error:  # nbformat raises many kinds for a malformed notebook
        raise ValueError(f"{path.name} is not a notebook ({type(error).__name__})") from None
    if not isinstance(notebook.get("cells"), list):
        raise ValueError(f"{path.name} has no cells")
    return notebook


def solution_cells(notebook: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """(grade_id, source) of every code solution cell, in notebook order."""
    parts = []
    for cell in notebook.cells:
        source = cell.get("source")
        if cell.get("cell_type") == "code" and is_solution(cell) and isinstance(source, str):
            parts.append((str(cell.metadata["nbgrader"].get("grade_id", "?")), source))
    return parts


def split_regions(source: str) -> tuple[list[tuple[int, str]], list[str]]:
    """(line number, line) inside the solution markers, and the lines outside them."""
    inside_lines, outside, inside = [], [], False
    for number, line in enumerate(source.splitlines(), start=1):
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END:
            inside = False
        elif inside:
            inside_lines.append((number, line))
        else:
            outside.append(line)
    return inside_lines, outside


def canonical(code: str) -> str:
    """``code`` as ``ast.unparse`` prints it, or "" where it does not parse.

    Students who run a formatter over the given code change its parentheses and line
    breaks; the given code's canonical form is boilerplate too, so two students who both
    reformatted it do not match on it.
    """
    try:
        return ast.unparse(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError):
        return ""


class Release:
    """What students were handed: each solution cell's stub, and every code cell's text."""

    def __init__(self, release_folder: Path, source_folder: Path) -> None:
        # Without a release folder the source's text outside the answers is the release.
        released = sorted(release_folder.glob("*.ipynb")) if release_folder.is_dir() else []
        from_source = not released
        self.stubs: dict[str, str] = {}
        self.cells: list[str] = []  # every code cell handed out, as it was
        texts = []
        for path in released or sorted(source_folder.glob("*.ipynb")):
            for cell in read_notebook(path).cells:
                if cell.get("cell_type") != "code":
                    continue
                text = "\n".join(split_regions(cell.source)[1]) if from_source else cell.source
                texts += [text, canonical(text)]
                self.cells.append(text)
                if is_solution(cell):
                    self.stubs[str(cell.metadata["nbgrader"].get("grade_id", "?"))] = text
        self.boilerplate = "\n\n".join(texts)

    def written(self, author: str, origin: str, cells: list[tuple[str, str]]) -> Document:
        """What ``author`` wrote in these solution cells beyond the release's stubs."""
        parts = [(gid, *written_lines(src, self.stubs.get(gid, ""))) for gid, src in cells]
        return join_parts(author, origin, parts)


def submission_document(
    author: str, origin: str, folder: Path, release: Release
) -> Document | Skipped:
    """What a student wrote in the notebooks of ``folder``, or why there is nothing to compare."""
    notebooks = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    if not notebooks:
        return Skipped(author, f"no notebook in {folder.name}/")
    cells: list[tuple[str, str]] = []
    for path in notebooks:
        try:
            cells += solution_cells(read_notebook(path))
        except (OSError, ValueError) as error:
            return Skipped(author, str(error))
    document = release.written(author, origin, cells)
    if not document.text.strip():
        return Skipped(author, "nothing written beyond the release's solution cells")
    return replace(document, sources=tuple(source for _, source in cells))


def reference_document(source_folder: Path) -> Document:
    """The reference solution: the source notebooks' solution regions."""
    parts: list[Part] = []
    sources = []
    for path in sorted(source_folder.glob("*.ipynb")):
        for grade_id, source in solution_cells(read_notebook(path)):
            inside = [(n, line) for n, line in split_regions(source)[0] if line.strip()]
            parts.append((grade_id, [n for n, _ in inside], [line for _, line in inside]))
            sources.append(source)
    return replace(join_parts("reference", "reference", parts), sources=tuple(sources))
