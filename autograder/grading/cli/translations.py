"""``autograd-course translations``: the translation catalogs (i18n/) updated from
solutions/ and the checks' messages."""

import argparse
import sys

from autograder.grading.cli.common import add_command

EXAMPLES = """
autograd-course translations
autograd-course translations --check
"""


def add(commands) -> None:
    """The translations command's parser."""
    translations = add_command(
        commands,
        "translations",
        EXAMPLES,
        help="update the translation catalogs (i18n/) from solutions/ and the checks' messages",
    )
    translations.add_argument(
        "--check", action="store_true", help="exit 1 when an entry is untranslated or fuzzy"
    )
    translations.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Update every language's catalogs; exit 1 with --check when a translator is owed."""
    from autograder.grading.authoring.i18n.catalog import LANGUAGES
    from autograder.grading.authoring.i18n.update import update_all

    owed = 0
    for language in LANGUAGES:
        for update in update_all(language):
            owed += update.untranslated + update.fuzzy
            state = "updated" if update.changed else "unchanged"
            print(
                f"{update.path}: {state}, {update.entries} entries, "
                f"{update.untranslated} untranslated, {update.fuzzy} fuzzy"
            )
    if owed:
        print(f"{owed} entries need a translator (empty msgstr or fuzzy)", file=sys.stderr)
    return 1 if args.check and owed else 0
