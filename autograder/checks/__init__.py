"""What a student's kernel imports: the torch-parity checks, the progress cell and the
per-student draws of hidden tests. Only numpy, torch, matplotlib and IPython are used here;
nothing under ``autograder.grading`` is ever imported (a test enforces it)."""

from autograder.checks.array import check_array
from autograder.checks.behaviour import check_flags, check_raises_like
from autograder.checks.parity import ParityReport, check_parity

__all__ = ["ParityReport", "check_array", "check_flags", "check_parity", "check_raises_like"]
