"""What a student's kernel imports: the torch-parity checks, the progress cell and the
per-student draws of hidden tests. Only numpy, torch, matplotlib and IPython are used here;
nothing under ``autograder.grading`` is ever imported (a test enforces it).

The five check helpers load when first named (PEP 562), so that the grading tools can import
a light module of this wing (``text_table``, ``seed``, ``templating``) without torch.
"""

from autograder.checks.lazy import lazy_names

CHECKS = {
    "ParityReport": "autograder.checks.parity",
    "check_parity": "autograder.checks.parity",
    "check_array": "autograder.checks.array",
    "check_flags": "autograder.checks.behaviour",
    "check_raises_like": "autograder.checks.behaviour",
}

__getattr__, __dir__ = lazy_names(__name__, CHECKS, globals())
__all__ = sorted(CHECKS)
