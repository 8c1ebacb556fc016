"""``autograd-course refused-hand-ins``: the hand-ins collect set aside, listed or removed."""

import argparse
from pathlib import Path

from autograder.grading.cli.common import UsageError, add_command, add_root

EXAMPLES = """
autograd-course refused-hand-ins --root ~/course
autograd-course refused-hand-ins --root ~/course --remove
"""


def add(commands) -> None:
    """The refused-hand-ins command's parser."""
    refused = add_command(
        commands,
        "refused-hand-ins",
        EXAMPLES,
        help="list (or --remove) the hand-ins collect set aside: made by another account than "
        "their student's, or with an unreadable timestamp",
    )
    add_root(refused)
    refused.add_argument("--remove", action="store_true", help="remove them")
    refused.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List (or remove) the set-aside hand-ins of the course's inbound folder."""
    from nbgrader.exchange.default.exchange import Exchange

    from autograder.grading.course.course_root import nbgrader_config
    from autograder.grading.pipeline.integrity.owned_collect import (
        SET_ASIDE,
        refusal,
        refused_hand_ins,
        remove_refused,
    )

    config = nbgrader_config(args.root)
    exchange = config.Exchange.get("root", Exchange.class_traits()["root"].default_value)
    inbound = Path(exchange) / config.CourseDirectory.course_id / "inbound"
    if not inbound.is_dir():
        raise UsageError(f"no inbound folder at {inbound}: nothing was released from {args.root}")
    found = refused_hand_ins(inbound)
    for path in found:
        reason = refusal(path, name=path.name.removeprefix(SET_ASIDE)) or "set aside"
        print(remove_refused(path) if args.remove else f"{path.name}: {reason}")
    print(f"{len(found)} refused hand-in(s) in {inbound}")
    return 0
