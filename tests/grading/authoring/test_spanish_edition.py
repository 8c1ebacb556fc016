"""Is the Spanish edition complete, current and Spanish? (fast: no kernel, no nbgrader)

Every unit of every English notebook must have a current (non-fuzzy) translation; the
committed solutions-es/ must be exactly what the generator makes of solutions/ and the
catalogs now; its code must be the English code; its prose must read as Spanish.
"""

import ast
import re
import string

import nbformat
import numpy as np
import pytest

from autograder.checks import language
from autograder.grading.authoring.i18n.catalog import (
    catalog_bytes,
    catalog_path,
    needs_work,
    read_catalog,
    translations,
    update_notebook_catalogs,
)
from autograder.grading.authoring.i18n.edition import edition, notebook_text, translate_notebook
from autograder.grading.authoring.i18n.units import cell_units, is_message, notebook_units
from autograder.grading.authoring.i18n.update import (
    messages_path,
    messages_template,
    non_literal_messages,
)
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments, notebook_path

SPANISH = edition("es")
# The card's section names (shared/seed/autograd-reference-card.es.txt), one per notebook.
CARD_SECTIONS = {
    "00-recipe": "Receta",
    "01-worked-example": "Ejemplo de trabajo",
    "02-how-it-works": "Cómo funciona",
    "03-gradient-controls": "Controles de gradiente",
    "04-custom-functions": "Notas de Python",
    "05-common-pitfalls": "Errores comunes",
    "06-alternatives": "Alternativas",
    "07-faq": "Preguntas frecuentes",
    "08-capstone": "Relacionado: bucles de entrenamiento",
    "09-mixed-precision": "Relacionado: GPUs y Precisión Mixta",
}


def english(assignment):
    return nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)


def spanish(assignment):
    return nbformat.read(notebook_path(SPANISH.solutions, assignment), as_version=4)


def owed_text(owed):
    """The first words of each owed msgid, for a failure message."""
    return "; ".join(
        f"{kind}: " + ", ".join(repr(m[:50]) for m in msgids[:5]) + (" ..." * (len(msgids) > 5))
        for kind, msgids in owed.items()
        if msgids
    )


@pytest.mark.parametrize("assignment", assignments())
def test_every_unit_has_a_current_translation(assignment):
    catalog = read_catalog(catalog_path("es", assignment), "es")
    owed = needs_work(catalog, [text for text, _ in notebook_units(english(assignment))])
    assert not owed["missing"] and not owed["stale"], (
        f"{assignment}: {owed_text(owed)}; run `autograd-course translations`, translate the "
        f"empty and fuzzy entries of {catalog_path('es', assignment)}, then "
        "`autograd-course release`"
    )


def test_a_changed_english_cell_is_reported_stale_until_translated(tmp_path):
    # The planted change: one markdown cell of a copy of 00 edited in English.
    solutions, i18n = tmp_path / "solutions", tmp_path / "i18n"
    notebook = english("00-recipe")
    (solutions / "00-recipe").mkdir(parents=True)
    (i18n / "es").mkdir(parents=True)
    (i18n / "es" / "00-recipe.po").write_bytes(catalog_path("es", "00-recipe").read_bytes())
    cell = next(c for c in notebook.cells if c.source.startswith("## The recipe in torch"))
    cell.source = cell.source.replace("is recorded as it runs", "is recorded while it runs")
    nbformat.write(notebook, notebook_path(solutions, "00-recipe"))
    units = [text for text, _ in notebook_units(notebook)]

    before_update = read_catalog(i18n / "es" / "00-recipe.po", "es")
    assert needs_work(before_update, units)["missing"] == [cell.source]
    [update] = update_notebook_catalogs("es", solutions, i18n)
    assert update.fuzzy == 1
    after_update = read_catalog(update.path, "es")
    assert needs_work(after_update, units) == {"missing": [], "stale": [cell.source]}
    # The generator keeps the English of a stale unit rather than an outdated translation.
    generated = translate_notebook(notebook, translations(after_update), "es")
    assert cell.source in [c.source for c in generated.cells]
    after_update[cell.source].flags.discard("fuzzy")
    update.path.write_bytes(catalog_bytes(after_update))
    assert needs_work(read_catalog(update.path, "es"), units) == {"missing": [], "stale": []}


@pytest.mark.parametrize("assignment", assignments())
def test_committed_spanish_solutions_are_generated_from_the_source_now(assignment):
    catalog = read_catalog(catalog_path("es", assignment), "es")
    expected = notebook_text(translate_notebook(english(assignment), translations(catalog), "es"))
    path = notebook_path(SPANISH.solutions, assignment)
    assert path.is_file(), f"{path} missing: run `autograd-course release`"
    assert path.read_text(encoding="utf-8") == expected, (
        f"{path} is stale (solutions/ or i18n/es/ changed): run `autograd-course release` "
        "and commit solutions-es/ and course-es/"
    )


def code_without_prose(source):
    """A code cell's AST dump without docstrings and message strings (comments are not in
    the AST)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in list(ast.walk(tree)):
        if is_message(node, parents.get(node)):
            if isinstance(node, ast.JoinedStr):
                node.values = []
            else:
                node.value = ""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[0].value.value = ""
    return ast.dump(tree)


@pytest.mark.parametrize("assignment", assignments())
def test_spanish_code_tests_and_points_are_the_english_ones(assignment):
    ours, theirs = spanish(assignment), english(assignment)
    assert len(ours.cells) == len(theirs.cells)
    for es_cell, en_cell in zip(ours.cells, theirs.cells, strict=True):
        assert es_cell.cell_type == en_cell.cell_type
        assert es_cell.metadata == en_cell.metadata
        if en_cell.cell_type != "code":
            continue
        source = es_cell.source
        if en_cell.metadata.get("nbgrader", {}).get("grade_id") == "setup":
            source = source.removeprefix("from autograder.checks.language import set_language\n\n")
            source = source.removeprefix('set_language("es")\n\n')
        assert code_without_prose(source) == code_without_prose(en_cell.source), (
            f"{assignment}: a code cell's code differs from the English one"
        )


def heading(notebook):
    return notebook.cells[0].source.splitlines()[0]


@pytest.mark.parametrize("assignment", assignments())
def test_titles_use_the_card_section_names(assignment):
    title = heading(spanish(assignment))
    assert CARD_SECTIONS[assignment].lower() in title.lower(), title


# Words that only English prose uses; a Spanish sentence has none of them (code, identifiers
# and torch's messages are removed first).
ENGLISH_WORDS = set(
    "the and of to is are with that this for your you it its which when what from by be not "
    "into each every after before only then than their there these those has have was were "
    "will would should can't don't does here how why whose".split()
)
_NOT_PROSE = [
    re.compile(r"```.*?```", re.DOTALL),  # code blocks
    re.compile(r"``.*?``|`[^`]*`"),  # inline code
    re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.DOTALL),  # math
    re.compile(r"\*[A-Z][^*]*→[^*]*\*"),  # JupyterLab's menu entries (English UI)
    re.compile(r"\*(?:Shift|Ctrl)\+\w+\*|\*Kernel[^*]*\*|\*Edit[^*]*\*|\*Run[^*]*\*"),
    re.compile(r"\"[^\"]*\"|'[^']*'"),  # quoted strings (torch's messages)
    re.compile(r"\(\*[^*]*\*\)"),  # (*define-by-run*): an English term quoted on purpose
    re.compile(r"https?://\S+"),
    re.compile(r"{[^{}]*}"),  # an f-string's fields: code
]


def english_words(text):
    """The English-only words of a unit's prose."""
    for pattern in _NOT_PROSE:
        text = pattern.sub(" ", text)
    words = re.findall(r"[A-Za-z']+", text)
    return [w for w in words if w.lower().strip(string.punctuation) in ENGLISH_WORDS]


@pytest.mark.parametrize("assignment", assignments())
def test_no_english_prose_is_left_in_the_spanish_notebook(assignment):
    notebook = spanish(assignment)
    found = []
    for index, cell in enumerate(notebook.cells):
        for unit in cell_units(cell):
            words = english_words(unit)
            if len(words) >= 2:
                found.append(f"cell {index + 1}: {unit[:60]!r} ({', '.join(words[:4])})")
    assert not found, f"{assignment}: English prose left: " + "; ".join(found[:8])


def test_the_prose_detector_finds_english():
    assert len(english_words("Fill in `__add__` with the local derivatives of each input.")) >= 2
    assert english_words("Completa `__add__` con las derivadas locales de cada entrada.") == []
    assert english_words('torch dice "the graph is freed" y `x.grad is None`.') == []


FIELD = re.compile(r"\{(\w*)\}")


def test_every_check_message_is_translated_with_the_same_fields():
    catalog = read_catalog(messages_path("es"), "es")
    for message in messages_template():
        if not message.id:
            continue
        assert message.id in catalog and catalog[message.id].string, (
            f"untranslated check message {message.id!r}: run `autograd-course translations` "
            f"and translate it in {messages_path('es')}"
        )
        translated = catalog[message.id]
        assert not translated.fuzzy, f"stale check message {message.id!r}"
        assert sorted(FIELD.findall(translated.string)) == sorted(FIELD.findall(message.id)), (
            f"{message.id!r}: the translation's {{fields}} differ"
        )


def test_every_check_message_is_a_literal_the_extractor_can_read():
    assert non_literal_messages() == [], (
        "tr()/marked() need a string literal as message; use translated() for a marked value"
    )


@pytest.fixture
def spanish_checks():
    language.set_language("es")
    yield
    language.set_language("en")


def test_a_spanish_check_fails_in_spanish_as_plain_text(spanish_checks):
    from autograder import check_parity
    from autograder.engine.tensor import Tensor

    with pytest.raises(AssertionError) as failure:
        check_parity(
            lambda a, b: a + b,
            {"a": np.ones((4, 3)), "b": np.ones(3)},
            tensor_type=Tensor,
            torch_fn=lambda a, b: a + b * 2,
        )
    text = str(failure.value)
    assert text.startswith("forward no coincide con torch (cpu, float64): valores incorrectos")
    assert "esperado (torch)" in text and "obtenido (tuyo)" in text
    assert "does not match" not in text and "expected" not in text
    with pytest.raises(AssertionError) as shape:
        check_parity(
            lambda a: a.sum(axis=0, keepdims=True),
            {"a": np.ones((4, 3))},
            tensor_type=Tensor,
            torch_fn=lambda a: a.sum(),
        )
    lines = str(shape.value).splitlines()
    assert lines[0] == "forward no coincide con torch (cpu, float64): forma incorrecta"
    assert lines[-1].startswith("  pista: ")
    assert english_words(str(shape.value)) == []


def test_the_english_checks_are_unchanged_by_the_catalog():
    from autograder import check_parity
    from autograder.engine.tensor import Tensor

    report = check_parity(lambda a: a * 2, {"a": np.ones(3)}, tensor_type=Tensor, quiet=True)
    assert report.summary().startswith("forward and 1 gradient match torch on cpu")
