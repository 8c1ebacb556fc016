"""What a student's kernel imports: the torch-parity checks, the progress cell and the
per-student draws of hidden tests. Only numpy, torch, matplotlib and IPython are used here;
nothing under ``autograder.grading`` is ever imported (a test enforces it).

The five check helpers load when first named (PEP 562), so that the grading tools can import
a light module of this wing (``text_table``, ``seed``, ``templating``) without torch.
"""

from importlib import import_module
from typing import Any

CHECKS = {
    "ParityReport": "autograder.checks.parity",
    "check_parity": "autograder.checks.parity",
    "check_array": "autograder.checks.array",
    "check_flags": "autograder.checks.behaviour",
    "check_raises_like": "autograder.checks.behaviour",
}


def __getattr__(name: str) -> Any:
    """A check helper of ``CHECKS``, imported from its module the first time it is named."""
    if name not in CHECKS:
        raise AttributeError(f"module 'autograder.checks' has no attribute {name!r}")
    value = getattr(import_module(CHECKS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The check helpers too, for tab completion."""
    return sorted({*globals(), *CHECKS})


__all__ = sorted(CHECKS)
