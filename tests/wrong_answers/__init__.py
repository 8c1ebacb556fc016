"""Mistakes students make, one module per notebook (``nb01.py``: ``WRONG``), each shown to
fail its visible check with words the student can act on (test_visible_checks.py)."""

import importlib

from visible_checks import WrongAnswer


def wrong_answers(assignment: str) -> list[WrongAnswer]:
    """The listed mistakes of ``assignment`` ("01-worked-example" -> ``nb01.WRONG``)."""
    try:
        module = importlib.import_module(f"wrong_answers.nb{assignment[:2]}")
    except ModuleNotFoundError:
        return []
    return list(module.WRONG)
