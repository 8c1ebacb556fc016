"""Does a student of the Spanish edition read Spanish to the last message? Every blank Spanish
release and every listed wrong answer (tests/wrong_answers/) typed into the Spanish edition run
as a student runs them; what they print and raise is scanned for English. The catalogs'
message strings (hidden tests' included: their failures reach the student in the feedback)
are scanned too.

English is told apart by the course's own words: a word of the English source (notebooks and
check messages) that the Spanish translations never use. Code stays as it is (identifiers,
``a.grad``, values), and so do torch's own messages, which the checks quote.
"""

import ast
import keyword
import re
from functools import cache

import nbformat
import pytest
from visible_checks import run_variants, wrong_notebook
from wrong_answers import wrong_answers

from autograder.checks.language import MESSAGES_DIR
from autograder.grading.authoring.i18n.catalog import catalog_path, read_catalog
from autograder.grading.authoring.i18n.edition import editions
from autograder.grading.authoring.i18n.units import messages
from autograder.grading.course.repo_paths import assignments, notebook_path

SPANISH = next(e for e in editions() if e.language == "es")
ENGLISH = next(e for e in editions() if e.language == "en")
EDITION = (SPANISH.course, SPANISH.solutions)

# What is not prose: a token with code in it, a quoted message (torch's, which the checks
# quote), an exception's own message after its class, a /regex/.
CODE_TOKEN = re.compile(r"\S*[_.()\[\]=<>/\\|0-9`{}]\S*")
QUOTED = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|“[^”\n]*”|/[^/\n]+/")
AFTER_ERROR_CLASS = re.compile(r"\b\w*(Error|Warning|Exception)\b: .*")
WORD = re.compile(r"[A-Za-zÁÉÍÓÚÜÑáéíóúüñ]{3,}")


def words(text: str) -> set[str]:
    text = AFTER_ERROR_CLASS.sub(" ", text)
    text = QUOTED.sub(" ", text)
    text = CODE_TOKEN.sub(" ", text)
    return {w.lower() for w in WORD.findall(text)}


@cache
def english_only() -> frozenset[str]:
    """Words the English source uses and no Spanish translation does."""
    english, spanish = set(), set()
    catalogs = [read_catalog(MESSAGES_DIR / "es.po", "es")]
    catalogs += [read_catalog(catalog_path("es", a), "es") for a in assignments()]
    for catalog in catalogs:
        for message in catalog:
            if message.id and message.string:
                english |= words(message.id)
                spanish |= words(message.string)
    return frozenset(english - spanish)


def is_code(line: str) -> bool:
    """A line of Python (a warning's source line, a printed expression), not a sentence."""
    stripped = line.strip()
    first = stripped.split(" ", 1)[0]
    if not (any(mark in stripped for mark in "()=[].") or keyword.iskeyword(first)):
        return False
    try:
        ast.parse(stripped)
    except SyntaxError:
        return False
    return True


def english_in(text: str) -> list[str]:
    """The lines of ``text`` that hold English, each with the English words found."""
    found = []
    for line in text.splitlines():
        if is_code(line):
            continue
        hits = sorted(words(line) & english_only())
        if hits:
            found.append(f"{line.strip()[:160]}  <- {', '.join(hits)}")
    return found


def test_the_scan_finds_english_and_lets_code_and_torch_messages_be():
    assert english_in("the gradient accumulates after two backward calls")
    assert not english_in("el gradiente se acumula tras dos llamadas a backward")
    quoted = 'uso indebido: torch lanza RuntimeError("one of the variables needed")'
    assert not english_in(quoted)
    assert not english_in("RuntimeError: one of the variables needed for gradient computation")
    assert not english_in("a.grad: tensor([1., 2.]) | is_leaf: True")
    assert not english_in("    return (grad * ctx.exponent * a ** (ctx.exponent - 1),)")
    assert not english_in("    return a * b")


def release_cells(assignment: str) -> list[str]:
    notebook = nbformat.read(notebook_path(SPANISH.course, assignment), as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def notebook_folder(assignment, tmp_path):
    """A folder holding the Spanish release's file (the progress table reads it)."""
    folder = tmp_path / assignment
    folder.mkdir()
    source = notebook_path(SPANISH.course, assignment)
    (folder / source.name).write_bytes(source.read_bytes())
    return folder


@pytest.mark.parametrize("assignment", assignments())
def test_a_spanish_student_reads_no_english(assignment, tmp_path):
    """The blank release (every cell, the progress table included) and each listed wrong
    answer up to the check that catches it."""
    folder = notebook_folder(assignment, tmp_path)
    blank, _ = run_variants(release_cells(assignment), [], folder=folder, keep_going=True)
    read = [blank["output"], *(f"{name}: {message}" for _, name, message in blank["errors"])]
    wrongs = wrong_answers(assignment)
    if wrongs:
        baseline, _ = wrong_notebook(None, assignment, EDITION)
        jobs = [wrong_notebook(w, assignment, EDITION) for w in wrongs]
        last_check = max(check for _, check in jobs)
        base, outcomes = run_variants(baseline[: last_check + 1], jobs, folder=folder)
        assert base["cell"] is None, f"the reference typed in fails in Spanish: {base}"
        read.append(base["output"])
        for wrong, (_, check), outcome in zip(wrongs, jobs, outcomes, strict=True):
            assert outcome["cell"] == check, (
                f"{wrong.name}: the Spanish edition does not fail at {wrong.check}: {outcome}"
            )
            read += [outcome["output"], outcome["message"]]
    assert english_in("\n".join(read)) == []


@pytest.mark.parametrize("assignment", assignments())
def test_every_message_string_of_the_spanish_edition_is_spanish(assignment):
    """Message strings (labels, assertion messages, printed labels), hidden tests included:
    their translations hold no English word."""
    notebook = nbformat.read(notebook_path(SPANISH.solutions, assignment), as_version=4)
    found = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for message in messages(cell.source):
                found += english_in(message.text)
    assert found == []


def test_english_left_in_a_catalog_is_found():
    english = nbformat.read(notebook_path(ENGLISH.solutions, "01-worked-example"), as_version=4)
    texts = [m.text for c in english.cells if c.cell_type == "code" for m in messages(c.source)]
    assert any(english_in(text) for text in texts), "the English edition's messages are English"
