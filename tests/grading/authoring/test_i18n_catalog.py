"""Do the translation catalogs follow the English source the way ``pybabel update`` would?"""

import nbformat
import pytest

from autograder.checks.language import read_po_text
from autograder.grading.authoring.i18n.catalog import (
    catalog_bytes,
    read_catalog,
    update_notebook_catalogs,
)
from autograder.grading.authoring.i18n.units import cell_units, translate_cell

CODE = '''# a comment a student reads,
# over two lines
def f(x):
    """Stub docstring: what f does."""
    y = x  # trailing remark here
    ### BEGIN SOLUTION
    # solution comment, never released
    ### END SOLUTION
    return y  # noqa: E501
'''


def one_notebook(folder, markdown):
    """solutions-like folder with one assignment whose notebook has a markdown and a code cell."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell(markdown), nbformat.v4.new_code_cell(CODE)]
    (folder / "00-x").mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / "00-x" / "00-x.ipynb")


def test_code_units_are_student_comments_and_docstrings():
    units = cell_units(nbformat.v4.new_code_cell(CODE))
    assert units == [
        "a comment a student reads,\nover two lines",
        "Stub docstring: what f does.",
        "trailing remark here",
    ]


MESSAGES = """check_array("a.grad after two backward calls", got, expected)
check_raises_like(run, twin, what="a second backward", match="backward through the graph")
assert ok, f"after {n} steps the loss is {loss}"
print("computed tensor:", y)
plt.title("loss curves")
labels = {"a": 1}
assert done, ("a sentence written over "
              "two literals")
assert done, "mixed {braces} " f"and {n}"
### BEGIN SOLUTION
print("a solution's message, never released")
### END SOLUTION
### BEGIN HIDDEN TESTS
raise AssertionError("a hidden test's message, read in the feedback")
### END HIDDEN TESTS
"""


def test_message_strings_are_units_and_code_strings_are_not():
    assert cell_units(nbformat.v4.new_code_cell(MESSAGES)) == [
        "a.grad after two backward calls",
        "a second backward",
        "after {n} steps the loss is {loss}",
        "computed tensor:",
        "loss curves",
        "a sentence written over two literals",
        "mixed {{braces}} and {n}",
        "a hidden test's message, read in the feedback",
    ]


def test_a_translated_message_keeps_its_fields_and_its_quotes_work():
    spanish = {
        "a.grad after two backward calls": "a.grad tras dos llamadas a backward",
        "a second backward": "una segunda pasada hacia atrás",
        "after {n} steps the loss is {loss}": "la pérdida es {loss} tras {n} pasos",
        "computed tensor:": "tensor calculado:",
        "loss curves": "curvas de pérdida",
        "a hidden test's message, read in the feedback": "un mensaje de una prueba oculta",
        "a sentence written over two literals": "una frase en dos literales",
    }
    cell = nbformat.v4.new_code_cell(MESSAGES)
    translate_cell(cell, lambda text: spanish.get(text, text))
    assert 'what="una segunda pasada hacia atrás", match="backward through the graph"' in (
        cell.source
    )
    assert 'f"la pérdida es {loss} tras {n} pasos"' in cell.source
    assert 'raise AssertionError("un mensaje de una prueba oculta")' in cell.source
    assert 'assert done, ("una frase en dos literales")' in cell.source
    assert 'assert done, f"mixed {{braces}} and {n}"' in cell.source
    assert 'print("a solution\'s message, never released")' in cell.source
    lost = dict(spanish, **{"after {n} steps the loss is {loss}": "la pérdida es {loss}"})
    with pytest.raises(ValueError, match="must keep its fields"):
        translate_cell(nbformat.v4.new_code_cell(MESSAGES), lambda text: lost.get(text, text))
    quoted = dict(spanish, **{"computed tensor:": 'tensor "calculado":'})
    with pytest.raises(ValueError, match="broke the code"):
        translate_cell(nbformat.v4.new_code_cell(MESSAGES), lambda text: quoted.get(text, text))


def test_translating_a_code_cell_changes_only_its_prose():
    cell = nbformat.v4.new_code_cell(CODE)
    spanish = {
        "a comment a student reads,\nover two lines": "un comentario en una línea",
        "Stub docstring: what f does.": "Qué hace f.",
        "trailing remark here": "nota al final",
    }
    translate_cell(cell, spanish.__getitem__)
    assert cell.source.splitlines()[:4] == [
        "# un comentario en una línea",
        "def f(x):",
        '    """Qué hace f."""',
        "    y = x  # nota al final",
    ]
    assert "# solution comment, never released" in cell.source
    assert cell.source.endswith("    return y  # noqa: E501\n")


def test_update_keeps_translations_and_marks_changed_english_fuzzy(tmp_path):
    solutions, i18n = tmp_path / "solutions", tmp_path / "i18n"
    one_notebook(solutions, "## The recipe\n\nOne variable, one expression.")
    [first] = update_notebook_catalogs("es", solutions, i18n)
    assert first.entries == 4 and first.untranslated == 4
    catalog = read_catalog(first.path, "es")
    for message in catalog:
        if message.id:
            message.string = f"ES {message.id}"
    first.path.write_bytes(catalog_bytes(catalog))

    [same] = update_notebook_catalogs("es", solutions, i18n)
    assert not same.changed and same.untranslated == 0 and same.fuzzy == 0

    one_notebook(solutions, "## The recipe\n\nOne variable, one expression, one call.")
    [changed] = update_notebook_catalogs("es", solutions, i18n)
    assert changed.changed and changed.fuzzy == 1 and changed.untranslated == 0
    text = changed.path.read_text()
    assert "#, fuzzy" in text
    assert '#| msgid "" "## The recipe\\n" "\\n" "One variable, one expression."' in text
    entries = read_po_text(text)  # the runtime reader skips the fuzzy entry
    assert "## The recipe\n\nOne variable, one expression, one call." not in entries
    assert entries["trailing remark here"] == "ES trailing remark here"


def test_a_fuzzy_entry_with_a_long_previous_text_survives_rewrites(tmp_path):
    """Babel reads the "#| msgid" lines of a fuzzy entry back as comments; rewritten, they
    used to grow into "# | ..." junk on every run."""
    catalog = read_catalog(tmp_path / "none.po", "es")
    before = "Each forward saves what its backward needs: " + "words to wrap the line " * 8
    catalog.add(before + "now", string="traducción", flags=["fuzzy"], previous_id=(before,))
    path = tmp_path / "x.po"
    path.write_bytes(catalog_bytes(catalog))
    for _ in range(3):
        path.write_bytes(catalog_bytes(read_catalog(path, "es")))
    text = path.read_text()
    assert "# |" not in text and "#, fuzzy" in text
    [entry] = [m for m in read_catalog(path, "es") if m.id]
    assert entry.fuzzy and entry.string == "traducción" and entry.user_comments == []
