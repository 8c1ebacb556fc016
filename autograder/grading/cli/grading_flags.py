"""GradingSettings on the command line: a flag per field, its default read off the
dataclass, so that a new setting is one field there and one entry here."""

import argparse
import operator
import os
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any

from autograder.grading.cli.common import positive
from autograder.grading.pipeline.grading_settings import VERDICTS, GradingSettings


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Flag:
    """A setting's flag: its name, argparse's ``options`` (whose ``help`` may say
    ``{default}``: the field's default as the flag writes it), and how a value passes from
    the flag to the setting and back."""

    name: str
    options: dict[str, Any]
    to_setting: Callable[[Any], Any] = _same
    from_setting: Callable[[Any], Any] = _same


# In the order of the help. The flag of a field named otherwise is set by its dest.
FLAGS: dict[str, Flag] = {
    "workers": Flag(
        "--workers",
        {
            "type": positive,
            "help": f"worker processes of the local Dask cluster (cores: {os.cpu_count()})",
        },
    ),
    "sandbox": Flag(
        "--no-sandbox",
        {
            "action": "store_true",
            "help": "grade with kernels outside bubblewrap (student code can then read the "
            "job's files and reach the network); without it, a machine where the sandbox "
            "cannot run is refused",
        },
        to_setting=operator.not_,
        from_setting=operator.not_,
    ),
    "scheduler": Flag(
        "--scheduler",
        {
            "metavar": "tcp://HOST:PORT",
            "help": "grade on this existing Dask cluster instead of a local one (see "
            "docs/scaling.md)",
        },
    ),
    "students": Flag(
        "--student",
        {
            "action": "extend",
            "nargs": "+",
            "metavar": "S",
            "help": "grade (again) only these students (an id starting with '-': --student=-ID)",
        },
    ),
    "force": Flag("--force", {"action": "store_true", "help": "regrade submissions graded before"}),
    "cell_timeout": Flag(
        "--cell-timeout",
        {"type": positive, "metavar": "S", "help": "seconds per cell (default: config)"},
    ),
    "memory_limit_mb": Flag(
        "--memory-limit",
        {
            "type": int,
            "metavar": "MB",
            "help": "address-space limit per submission, kernel included (0: none; default "
            "{default})",
        },
        to_setting=lambda mb: mb or None,
        from_setting=lambda mb: mb or 0,
    ),
    "submission_timeout": Flag(
        "--submission-timeout",
        {
            "type": float,
            "metavar": "S",
            "help": "wall-clock seconds per submission before it is killed (0: none; default "
            "{default:g})",
        },
    ),
    "verdicts": Flag(
        "--verdicts",
        {
            "choices": VERDICTS,
            "help": "where test cells run: a second, trusted kernel that reaches the student's "
            "objects only through a narrow channel, so the student's code cannot change a "
            "verdict (default), or the student's own kernel (nbgrader's way)",
        },
    ),
}

# Settings for a program calling autograde, not for the command line; each says why.
PYTHON_ONLY = {
    "progress": "a command always shows its progress lines",
    "seed_salt": "a course's students keep their seeds; the assurance runs vary them",
    "hide_packages": "the sandbox hides the course's packages; tests plant more",
}


def unflagged(settings: type = GradingSettings) -> list[str]:
    """The fields of ``settings`` with neither a flag nor a reason to have none."""
    return [f.name for f in fields(settings) if f.name not in FLAGS and f.name not in PYTHON_ONLY]


def field_default(name: str) -> Any:
    """The default of GradingSettings' field ``name``."""
    (found,) = (f for f in fields(GradingSettings) if f.name == name)
    return found.default_factory() if found.default is MISSING else found.default


def add_grading_flags(parser: argparse.ArgumentParser) -> None:
    """A flag for each setting, in FLAGS' order, its default GradingSettings'."""
    for name, flag in FLAGS.items():
        default = flag.from_setting(field_default(name))
        options = dict(flag.options)
        options["help"] = options["help"].format(default=default)
        parser.add_argument(flag.name, dest=name, default=default, **options)


def grading_settings(args: argparse.Namespace) -> GradingSettings:
    """The settings the parsed flags ask for; PYTHON_ONLY ones keep their defaults."""
    return GradingSettings(
        **{name: flag.to_setting(getattr(args, name)) for name, flag in FLAGS.items()}
    )
