"""``autograd-course reveals``: which assignments' answers each release shows."""

import argparse
import json

from autograder.grading.cli.common import add_command

EXAMPLES = """
autograd-course reveals
autograd-course reveals --edition es --json
"""


def add(commands) -> None:
    """The reveals command's parser."""
    reveals = add_command(
        commands,
        "reveals",
        EXAMPLES,
        help="which assignments' answers each release shows (the share of their solution lines)",
    )
    reveals.add_argument("--edition", choices=("en", "es", "all"), default="all")
    reveals.add_argument("--json", action="store_true", help="print JSON instead of a table")
    reveals.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print each chosen edition's reveal map, as a table or as JSON."""
    from autograder.grading.authoring.i18n.edition import edition, editions
    from autograder.grading.authoring.reveals import markdown_table, reveal_map

    chosen = editions() if args.edition == "all" else [edition(args.edition)]
    maps = [reveal_map(each) for each in chosen]
    if args.json:
        print(json.dumps([each.as_json() for each in maps], indent=2))
    else:
        print(markdown_table(maps))
    return 0
