"""The course's editions, and the generator of a translated edition's solution notebooks.

English is the source: ``solutions/`` (nbgrader's source) and ``course/`` (its release).
A translated edition has the same folders beside them, ``solutions-<lang>/`` and
``course-<lang>/``, both generated and committed: its solution notebooks are the English
ones with every unit replaced by its catalog translation (``units.translate_cell``) and one
line added to the setup cell so the checks speak the edition's language; code, tests,
hidden tests, grade ids and points are the English notebook's. Its release comes from it
through nbgrader like the English one, with the edition's nbgrader settings
(``i18n/<lang>/nbgrader_config.py``: the answer stubs students see, the feedback pages).
"""

import copy
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.grading.authoring.i18n.catalog import (
    I18N_DIR,
    catalog_path,
    read_catalog,
    translations,
)
from autograder.grading.authoring.i18n.units import translate_cell
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    REPO_ROOT,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)

ENGLISH = "en"
SETUP_CELL = "setup"  # grade_id of every notebook's first code cell (imports and seeds)


@dataclass(frozen=True)
class Edition:
    """One language of the course: where its source and release live."""

    language: str
    solutions: Path
    course: Path
    settings: Path | None  # nbgrader settings loaded after the course's own config

    @property
    def translated(self) -> bool:
        """Generated from the English source and a catalog."""
        return self.language != ENGLISH


def edition(language: str, repo_root: Path = REPO_ROOT) -> Edition:
    """The edition of ``language`` ("en", "es")."""
    if language == ENGLISH:
        return Edition(ENGLISH, SOLUTIONS_DIR, COURSE_DIR, None)
    settings = I18N_DIR / language / "nbgrader_config.py"
    if not settings.is_file():
        raise ValueError(f"no edition {language!r}: {settings} is missing")
    return Edition(
        language,
        repo_root / f"solutions-{language}",
        repo_root / f"course-{language}",
        settings,
    )


def editions() -> list[Edition]:
    """English first, then every translated edition with settings in i18n/."""
    languages = sorted(p.parent.name for p in I18N_DIR.glob("*/nbgrader_config.py"))
    return [edition(ENGLISH), *(edition(language) for language in languages)]


def language_lines(language: str) -> str:
    """What a translated edition's setup cell starts with: the checks' language."""
    return f'from autograder.checks.language import set_language\n\nset_language("{language}")\n\n'


def translate_notebook(
    english: nbformat.NotebookNode, messages: dict[str, str], language: str
) -> nbformat.NotebookNode:
    """The translated notebook: each unit through ``messages`` (English when it has none)."""
    notebook = copy.deepcopy(english)
    for cell in notebook.cells:
        translate_cell(cell, lambda text: messages.get(text, text))
        if cell.metadata.get("nbgrader", {}).get("grade_id") == SETUP_CELL:
            cell.source = language_lines(language) + cell.source
    notebook.metadata["language_edition"] = language
    return notebook


def notebook_text(notebook: nbformat.NotebookNode) -> str:
    """A notebook as nbformat writes it (the form every committed notebook has)."""
    return nbformat.writes(notebook) + "\n"


def generate_solutions(target: Edition, source: Edition | None = None) -> list[Path]:
    """Write ``target``'s solution notebooks from the English ones; return those changed."""
    source = source or edition(ENGLISH)
    changed = []
    for assignment in assignments(source.solutions):
        english = nbformat.read(notebook_path(source.solutions, assignment), as_version=4)
        catalog = read_catalog(catalog_path(target.language, assignment), target.language)
        translated = translate_notebook(english, translations(catalog), target.language)
        path = notebook_path(target.solutions, assignment)
        text = notebook_text(translated)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
