"""torch for the checks, or a stand-in that says why it is missing.

At grading time the student's kernel has no torch (no autograd library at all: the test
cells run in a trusted kernel, which has it), yet its setup cell still imports the checks.
So the check modules import torch from here: the real module where it is installed, else
``ABSENT``, whose every attribute raises a clear ModuleNotFoundError when a check is used.
"""

from typing import Any

MISSING = (
    "torch is not available in this kernel (while grading, the student's kernel has no "
    "autograd library: the checks run in a separate, trusted kernel)"
)


class AbsentTorch:
    """Stands for torch where it cannot be imported: any use raises, naming the cause."""

    def __getattr__(self, name: str) -> Any:
        raise ModuleNotFoundError(f"{MISSING}; asked for torch.{name}")

    def __repr__(self) -> str:
        return "<torch: not available in this kernel>"


def load_torch() -> Any:
    """The torch module, or an ``AbsentTorch`` when it cannot be imported here."""
    try:
        import torch
    except ImportError:
        return AbsentTorch()
    return torch


torch = load_torch()
AVAILABLE = not isinstance(torch, AbsentTorch)
