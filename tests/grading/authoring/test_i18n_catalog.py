"""Do the translation catalogs follow the English source the way ``pybabel update`` would?"""

import nbformat

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
