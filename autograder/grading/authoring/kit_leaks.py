"""Does a student kit hold an answer? Every file of it, unpacked, searched for answer lines.

The answers are the lines of every solution region and hidden-test block of the solution
notebooks (both editions) and the lines of the reference engine's function bodies, each
long enough to be specific (``MIN_LENGTH``). A line a student already sees in the release of
its own notebook or an earlier one is no secret (it is given code, or boilerplate) and is
left out. What may hold an answer line is one thing only: the release notebook of a later
assignment, whose given cells carry the solved engine of the notebooks before it, and only
once that earlier assignment is closed (a kit built for a point in the term is searched with
the assignments still open then).

Everything in the kit is searched: archives are opened (a wheel, a zip, a tarball, nested),
notebooks are read as JSON strings too (JSON escapes quotes), compiled Python's constants
are read back with ``marshal``, and any other file as text.
"""

import ast
import io
import json
import marshal
import re
import tarfile
import types
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.checks.hidden_tests import split_hidden_tests
from autograder.grading.authoring.i18n.edition import Edition, editions
from autograder.grading.course.repo_paths import REPO_ROOT, assignments, notebook_path

MIN_LENGTH = 25  # shorter lines (``return out``, ``self.grad = None``) say nothing specific
ENGINE_DIR = REPO_ROOT / "autograder" / "engine"
_IMPORT = re.compile(r"(from \S+ )?import \S")
_REGION = re.compile(r"BEGIN SOLUTION[^\n]*\n(.*?)\n[^\n]*END SOLUTION", re.S)


@dataclass(frozen=True)
class Secret:
    """One answer line, where it comes from, and the assignment it answers (None: no
    release may hold it)."""

    line: str
    origin: str
    answers: int | None


@dataclass(frozen=True)
class Leak:
    """An answer line found in the kit: the secret and the kit file (``a.whl!member``)."""

    secret: Secret
    where: str

    def __str__(self) -> str:
        return f"{self.where}: {self.secret.line!r} (from {self.secret.origin})"


def specific_lines(text: str) -> list[str]:
    """The stripped lines of ``text`` long enough to be specific; imports are not (a hidden
    test importing a check helper tells nothing about an answer)."""
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if len(line) >= MIN_LENGTH and not _IMPORT.match(line)]


def _code_cells(path: Path) -> Iterator[tuple[dict, str]]:
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] == "code":
            yield cell.get("metadata", {}).get("nbgrader", {}), source


def notebook_secrets(path: Path, origin: str) -> Iterator[tuple[str, str]]:
    """(line, origin) of each solution-region and hidden-test line of a solution notebook."""
    for spec, source in _code_cells(path):
        if spec.get("solution"):
            for region in _REGION.findall(source):
                yield from ((line, f"{origin} solution") for line in specific_lines(region))
        if spec.get("grade"):
            for block in split_hidden_tests(source)[1]:
                yield from ((line, f"{origin} hidden test") for line in specific_lines(block))


def engine_secrets(engine_dir: Path = ENGINE_DIR) -> Iterator[tuple[str, str]]:
    """(line, origin) of each line of every function body of the reference engine."""
    for path in sorted(engine_dir.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = "\n".join(lines[node.body[0].lineno - 1 : node.end_lineno])
                origin = f"autograder/engine/{path.name}:{node.name}"
                yield from ((line, origin) for line in specific_lines(body))


def release_texts(chosen: list[Edition]) -> list[str]:
    """For each assignment (in order), every cell of its release in every edition, as text:
    a line shown anywhere there (a longer line, a markdown example) is shown to students."""
    texts = []
    for assignment in assignments(chosen[0].solutions):
        cells = [
            "".join(cell["source"])
            for each in chosen
            if notebook_path(each.course, assignment).is_file()  # not released yet: shows nothing
            for cell in json.loads(notebook_path(each.course, assignment).read_text("utf-8"))[
                "cells"
            ]
        ]
        texts.append("\n".join(cells))
    return texts


def answer_lines(chosen: list[Edition] | None = None) -> list[Secret]:
    """Every answer line of the course, with the assignment it answers (see the module)."""
    chosen = chosen or editions()
    public = release_texts(chosen)
    ids = assignments()
    secrets: dict[str, Secret] = {}
    for each in chosen:
        for number, assignment in enumerate(ids):
            path = notebook_path(each.solutions, assignment)
            origin = f"{each.solutions.name}/{assignment}"
            for line, where in notebook_secrets(path, origin):
                if line not in secrets and not any(line in shown for shown in public[: number + 1]):
                    secrets[line] = Secret(line, where, number)
    for line, origin in engine_secrets():
        if line not in secrets and not any(line in shown for shown in public):
            secrets[line] = Secret(line, origin, None)
    return list(secrets.values())


def pyc_strings(data: bytes) -> list[str]:
    """The string constants of a compiled module (its 16-byte header skipped), nested too."""
    try:
        code = marshal.loads(data[16:])
    except (ValueError, EOFError, TypeError):
        return []
    found, pending = [], [code]
    while pending:
        value = pending.pop()
        if isinstance(value, types.CodeType):
            pending += list(value.co_consts)
        elif isinstance(value, tuple | frozenset):
            pending += list(value)
        elif isinstance(value, str):
            found.append(value)
        elif isinstance(value, bytes):
            found.append(value.decode("utf-8", "ignore"))
    return found


def json_strings(value: object) -> Iterator[str]:
    """Every string inside parsed JSON (a notebook's cell sources, outputs, metadata)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from json_strings(item)


def texts(name: str, data: bytes) -> Iterator[tuple[str, str]]:
    """(where, text) for a file and, for an archive, for every member inside it."""
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.infolist():
                if not member.is_dir():
                    yield from texts(f"{name}!{member.filename}", archive.read(member))
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member in archive.getmembers():
                if member.isfile():
                    content = archive.extractfile(member).read()
                    yield from texts(f"{name}!{member.name}", content)
        return
    except tarfile.TarError:
        pass
    text = data.decode("utf-8", "ignore")
    parts = [text]
    if name.endswith(".pyc"):
        parts += pyc_strings(data)
    if name.endswith((".ipynb", ".json")):
        try:
            parts += json_strings(json.loads(text))
        except ValueError:
            pass
    yield name, "\n".join(parts)


def release_number(where: str) -> int | None:
    """The assignment whose release notebook ``where`` is (``NN-slug/NN-slug.ipynb`` at the
    kit's top, not inside an archive), else None."""
    folder, _, name = where.partition("/")
    ids = assignments()
    if "!" not in where and folder in ids and name == f"{folder}.ipynb":
        return ids.index(folder)
    return None


def find_leaks(
    kit: Path, secrets: list[Secret], still_open: frozenset[int] = frozenset()
) -> list[Leak]:
    """Every answer line in the kit folder where no rule allows it. The answers of a
    ``still_open`` assignment (by number) are allowed nowhere, not even in a later release."""
    leaks = []
    for path in sorted(p for p in kit.rglob("*") if p.is_file()):
        for where, text in texts(path.relative_to(kit).as_posix(), path.read_bytes()):
            release = release_number(where)
            for secret in secrets:
                allowed = release is not None and secret.answers is not None
                allowed = allowed and secret.answers not in still_open
                if allowed and release > secret.answers:
                    continue  # a later notebook's given cells: the solved earlier engine
                if secret.line in text:
                    leaks.append(Leak(secret, where))
    return leaks
