"""``autograd-course hub``: the course on a local JupyterHub for a trial, until Ctrl-C."""

import argparse
from pathlib import Path

from autograder.grading.cli.common import UsageError, add_command, positive

EXAMPLES = """
sudo .venv/bin/autograd-course hub --students 3
sudo .venv/bin/autograd-course hub --lti lti.toml
"""


def add(commands) -> None:
    """The hub command's parser."""
    hub = add_command(
        commands,
        "hub",
        EXAMPLES,
        help="the course on a local JupyterHub (127.0.0.1) for a trial, until Ctrl-C",
        description="As root: make Unix accounts for an instructor and N students (with "
        "passwords printed for this run), nbgrader's exchange, the students' kit-only "
        "environment and the instructor's course root, then start JupyterHub on 127.0.0.1 "
        "with its proxy (configurable-http-proxy, installed from npm into build/hub-node). "
        "Ctrl-C stops every process and removes the accounts. For a local trial only.",
    )
    hub.add_argument("--students", type=positive, default=2, help="default: 2")
    hub.add_argument("--port", type=positive, default=8000, help="default: 8000")
    hub.add_argument("--password", help="one password for every account (default: a new one each)")
    hub.add_argument(
        "--lti",
        type=Path,
        metavar="TOML",
        help="sign in by LTI 1.3 launches from Canvas or Moodle instead of passwords: the "
        "platform's issuer, client_id, authorize_url, jwks_endpoint, and the LMS user ids of "
        "the instructor and the students (docs/instructors.md)",
    )
    hub.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the trial hub until Ctrl-C; a setup that cannot be made is bad input."""
    from autograder.grading.authoring.hub.trial import TrialError, run_trial

    try:
        return run_trial(args.students, args.port, args.password, args.lti)
    except TrialError as error:
        raise UsageError(str(error)) from None
