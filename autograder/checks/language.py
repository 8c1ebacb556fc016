"""The language the checks speak: English, or the language of the notebook's edition.

Every message a student reads from this package (a check's success line, failure headline,
labels and hints, the progress table) is written in English as ``tr("... {name} ...",
name=value)``. A Spanish notebook's setup cell calls ``set_language("es")``; from then on
``tr`` looks the English text up in ``messages/es.po`` (a gettext catalog, kept up to date
by ``autograd-course translations``) and fills the fields into the translation. A message
the catalog lacks, or marks fuzzy, stays English. The catalog is read with the standard
library only: the student's kernel imports nothing else for it, and it lives inside the
package because the grading sandbox shows the kernel only the package.
"""

import ast
import functools
import os
from pathlib import Path

MESSAGES_DIR = Path(__file__).resolve().parent / "messages"
ENGLISH = "en"
# A kernel started with this variable set speaks that language before any set_language call.
LANGUAGE_VARIABLE = "AUTOGRAD_COURSE_LANGUAGE"

_language = os.environ.get(LANGUAGE_VARIABLE, ENGLISH) or ENGLISH


def available_languages() -> list[str]:
    """English plus every language with a catalog in ``messages/``."""
    return [ENGLISH, *sorted(p.stem for p in MESSAGES_DIR.glob("*.po"))]


def set_language(code: str) -> None:
    """Make the checks speak ``code`` ("en", "es") in this kernel from now on."""
    global _language
    if code not in available_languages():
        raise ValueError(f"no messages for language {code!r}; known: {available_languages()}")
    _language = code


def tr(message: str, /, **fields: object) -> str:
    """``message`` in the current language, with ``{field}`` placeholders filled in."""
    text = message
    if _language != ENGLISH:
        text = catalog(_language).get(message, message)
    return text.format(**fields) if fields else text


# Languages that write 0,5 where English writes 0.5.
DECIMAL_COMMA = frozenset({"es"})


def number(value: float, spec: str = "g") -> str:
    """``value`` as ``format(value, spec)`` writes it, with the current language's decimal
    mark: for numbers in a sentence (an error, a time), not for values shown as code."""
    text = format(value, spec)
    return text.replace(".", ",") if _language in DECIMAL_COMMA else text


def label(text: str) -> str:
    """``text`` unchanged. In a notebook's code it marks a string a student reads that is no
    check's label already (a name in a table, a hint kept in a dict), so that the notebook's
    translated edition translates it (``autograder.grading.authoring.i18n.units``)."""
    return text


def translated(message: str) -> str:
    """The translation of a message kept in a variable, marked where written (``marked``)."""
    return tr(message)


def marked(message: str) -> str:
    """``message`` unchanged, marked for the catalog: translated later, where shown (``tr``)."""
    return message


@functools.cache
def catalog(code: str) -> dict[str, str]:
    """msgid -> msgstr of the translated, non-fuzzy entries of ``messages/<code>.po``."""
    path = MESSAGES_DIR / f"{code}.po"
    return read_po_text(path.read_text(encoding="utf-8")) if path.is_file() else {}


def read_po_text(text: str) -> dict[str, str]:
    """The translated, non-fuzzy entries of a .po file's text (no plurals, no msgctxt)."""
    entries: dict[str, str] = {}
    fuzzy = False
    field: str | None = None
    parts: dict[str, list[str]] = {}

    def flush() -> None:
        nonlocal fuzzy, field
        msgid, msgstr = "".join(parts.get("msgid", [])), "".join(parts.get("msgstr", []))
        if msgid and msgstr and not fuzzy:
            entries[msgid] = msgstr
        parts.clear()
        fuzzy, field = False, None

    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#~"):
            if parts:
                flush()
            continue
        if line.startswith("#"):
            if parts and field == "msgstr":
                flush()
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            continue
        keyword, _, rest = line.partition(" ")
        if keyword in ("msgid", "msgstr"):
            if keyword == "msgid" and parts:
                flush()  # entries without comments between them
            field = keyword
            parts.setdefault(keyword, []).append(ast.literal_eval(rest))
        elif line.startswith('"') and field is not None:
            parts[field].append(ast.literal_eval(line))
    if parts:
        flush()
    return entries
