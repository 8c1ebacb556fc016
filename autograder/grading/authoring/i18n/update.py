"""``autograd-course translations``: every catalog brought up to its English source.

Two kinds of catalog, one update rule (``catalog.updated_catalog``, like ``pybabel
update``): the notebooks' (``i18n/<language>/<notebook>.po``, units from solutions/) and the
checks' messages (``autograder/checks/messages/<language>.po``, every ``tr("...")`` call in
the student-side modules, extracted with Babel's Python extractor).
"""

import ast
import contextlib
import io
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file

from autograder.checks.language import MESSAGES_DIR
from autograder.grading.authoring.i18n.catalog import (
    I18N_DIR,
    Update,
    new_catalog,
    summarize,
    update_notebook_catalogs,
    updated_catalog,
    write_catalog,
)
from autograder.grading.course.repo_paths import REPO_ROOT, SOLUTIONS_DIR

PACKAGE_DIR = REPO_ROOT / "autograder"
# The modules whose messages a student reads: the checks and the notebook helpers.
STUDENT_SIDE = ("checks/*.py", "*.py", "grading/authoring/i18n/feedback.py")


def message_sources(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The student-side modules that may call ``tr``."""
    return sorted({path for pattern in STUDENT_SIDE for path in package_dir.glob(pattern)})


def messages_template(package_dir: Path = PACKAGE_DIR) -> Catalog:
    """A catalog of every ``tr("...")`` message in the student-side modules."""
    template = new_catalog(None)
    for path in message_sources(package_dir):
        name = path.relative_to(package_dir.parent).as_posix()
        # Babel warns on stderr about every f-string among a call's arguments; the fields'
        # values are f-strings on purpose, and non_literal_messages() guards the messages.
        with contextlib.redirect_stderr(io.StringIO()):
            found = list(
                extract_from_file(
                    "python", path, keywords={"tr": (1,), "marked": (1,)}, comment_tags=()
                )
            )
        for line, message, _comments, _context in found:
            if not isinstance(message, str) or not message:
                continue
            if message in template:
                template[message].locations.append((name, line))
            else:
                template.add(message, locations=[(name, line)], flags=())
    return template


def non_literal_messages(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """``file:line`` of each ``tr``/``marked`` call whose message is not a plain string literal
    (the extractor cannot list it, so it would never be translated)."""
    found = []
    for path in message_sources(package_dir):
        if path.name == "language.py":  # where tr and translated are defined
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name | ast.Attribute)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("tr", "marked")
                and not (
                    node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                )
            ):
                found.append(f"{path.relative_to(package_dir.parent)}:{node.lineno}")
    return found


def messages_path(language: str, messages_dir: Path = MESSAGES_DIR) -> Path:
    """The checks' catalog of ``language``."""
    return messages_dir / f"{language}.po"


def update_messages(language: str, messages_dir: Path = MESSAGES_DIR) -> Update:
    """Bring the checks' catalog of ``language`` up to the messages in the code."""
    path = messages_path(language, messages_dir)
    catalog = updated_catalog(messages_template(), path, language)
    return summarize(path, catalog, write_catalog(path, catalog))


def update_all(
    language: str, solutions_dir: Path = SOLUTIONS_DIR, i18n_dir: Path = I18N_DIR
) -> list[Update]:
    """Every catalog of ``language``: the notebooks', then the checks'."""
    return [*update_notebook_catalogs(language, solutions_dir, i18n_dir), update_messages(language)]
