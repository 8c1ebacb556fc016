"""The translation catalogs: gettext .po files, read and updated with Babel.

``i18n/<language>/<notebook stem>.po`` holds one entry per unit of that notebook (see
``units``): msgid the English text, msgstr its translation, no msgctxt. Updating a catalog
from the English source works like ``pybabel update``: translated entries are kept, a unit
whose English changed gets the closest old translation marked ``fuzzy`` (with the old
English as ``#| msgid``), a new unit an empty msgstr, and a unit that is gone stays at the
end as obsolete (``#~``), so its translation is not lost. Headers carry fixed dates, so an
update of an unchanged source rewrites the files byte for byte.
"""

import datetime as dt
import io
from dataclasses import dataclass
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, write_po

from autograder.grading.authoring.i18n.units import notebook_units
from autograder.grading.course.repo_paths import (
    REPO_ROOT,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)

I18N_DIR = REPO_ROOT / "i18n"
LANGUAGES = ("es",)
PROJECT = "autograd-course"
# Fixed header dates: the catalogs change only when their entries do.
_FIXED_DATE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
_WIDTH = 100
HEADER_COMMENT = (
    "# Translation of the autograd course (see docs/instructors.md, Spanish edition).\n"
    "# msgid: the English unit, as in solutions/; #: notebook:cell number (from 1).\n"
    "# After editing English cells run `autograd-course translations`: entries whose English\n"
    "# changed come back fuzzy (#| msgid is the old English); fix the msgstr, drop the fuzzy flag."
)


def catalog_path(language: str, assignment: str, i18n_dir: Path = I18N_DIR) -> Path:
    """``i18n/<language>/<assignment>.po``: the catalog of one notebook."""
    return i18n_dir / language / f"{assignment}.po"


def new_catalog(language: str | None) -> Catalog:
    """An empty catalog with this project's fixed header."""
    catalog = Catalog(
        locale=language,
        project=PROJECT,
        version="1",
        copyright_holder=None,
        msgid_bugs_address=None,
        creation_date=_FIXED_DATE,
        revision_date=_FIXED_DATE,
        fuzzy=False,
    )
    catalog.language_team = f"{language} <autograd-course>" if language else ""
    catalog.last_translator = "autograd-course"
    catalog.header_comment = HEADER_COMMENT
    return catalog


def template_for(notebook: nbformat.NotebookNode, name: str) -> Catalog:
    """The catalog of a notebook's English units, every msgstr empty."""
    template = new_catalog(None)
    for text, index in notebook_units(notebook):
        template.add(text, locations=[(name, index + 1)], flags=())
    return template


def read_catalog(path: Path, language: str) -> Catalog:
    """A .po file as a Babel catalog (an empty one when the file does not exist)."""
    if not path.is_file():
        return new_catalog(language)
    with path.open("rb") as handle:
        catalog = read_po(handle, locale=language, abort_invalid=True)
    # Babel reads the "#| msgid" lines it wrote for a fuzzy entry back as translator
    # comments, which each later write wraps again into junk. This project writes no
    # translator comments: drop them (the fuzzy flag stays).
    for message in catalog:
        message.user_comments = []
    return catalog


def catalog_bytes(catalog: Catalog) -> bytes:
    """The .po text of a catalog, written the one way this project writes catalogs."""
    catalog.creation_date = _FIXED_DATE
    catalog.revision_date = _FIXED_DATE
    catalog.header_comment = HEADER_COMMENT
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=_WIDTH, include_previous=True, sort_output=False)
    return buffer.getvalue()


def updated_catalog(template: Catalog, path: Path, language: str) -> Catalog:
    """The catalog at ``path`` brought up to ``template`` as ``pybabel update`` would."""
    catalog = read_catalog(path, language)
    catalog.update(template, update_header_comment=False, update_creation_date=False)
    # Babel keeps the old catalog's order; ours follows the notebook.
    ordered = new_catalog(language)
    for message in template:
        if message.id:
            ordered[message.id] = catalog[message.id]
    ordered.obsolete = catalog.obsolete
    return ordered


@dataclass(frozen=True)
class Update:
    """One catalog written by ``update_catalogs``: how many entries need a translator."""

    path: Path
    changed: bool
    entries: int
    untranslated: int
    fuzzy: int


def write_catalog(path: Path, catalog: Catalog) -> bool:
    """Write ``catalog`` at ``path`` when its text differs; return whether it did."""
    data = catalog_bytes(catalog)
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def summarize(path: Path, catalog: Catalog, changed: bool) -> Update:
    """Counts of a catalog's live entries for the updater's report."""
    live = [m for m in catalog if m.id]
    return Update(
        path=path,
        changed=changed,
        entries=len(live),
        untranslated=sum(not m.string for m in live),
        fuzzy=sum(m.fuzzy and bool(m.string) for m in live),
    )


def update_notebook_catalogs(
    language: str,
    solutions_dir: Path = SOLUTIONS_DIR,
    i18n_dir: Path = I18N_DIR,
) -> list[Update]:
    """Bring every notebook's catalog up to the English source in ``solutions_dir``."""
    updates = []
    for assignment in assignments(solutions_dir):
        notebook = nbformat.read(notebook_path(solutions_dir, assignment), as_version=4)
        template = template_for(notebook, f"{assignment}.ipynb")
        path = catalog_path(language, assignment, i18n_dir)
        catalog = updated_catalog(template, path, language)
        updates.append(summarize(path, catalog, write_catalog(path, catalog)))
    return updates


def translations(catalog: Catalog) -> dict[str, str]:
    """msgid -> msgstr of the entries that are translated and not fuzzy."""
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


def needs_work(catalog: Catalog, msgids: list[str]) -> dict[str, list[str]]:
    """The ``msgids`` a translator still owes: missing (or empty) and fuzzy (stale)."""
    missing, stale = [], []
    for msgid in msgids:
        message: Message | None = catalog.get(msgid)
        if message is None or not message.string:
            missing.append(msgid)
        elif message.fuzzy:
            stale.append(msgid)
    return {"missing": missing, "stale": stale}
