"""Torch-parity checks for the autograd course, and the instructor's grading tools.

Notebook check cells use four helpers: ``check_parity`` (values and gradients against
torch on every available device), ``check_raises_like`` (same exception class as torch for
the same misuse), ``check_flags`` (``requires_grad``, ``is_leaf``, ``grad is None``...) and
``check_array`` (one array against torch's).
"""

from autograder.array_check import check_array
from autograder.behaviour import check_flags, check_raises_like
from autograder.parity import ParityReport, check_parity

__all__ = ["ParityReport", "check_array", "check_flags", "check_parity", "check_raises_like"]
