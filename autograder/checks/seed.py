"""Per-student random draws for hidden tests, stable across regrades.

Hidden tests check a student's code on inputs the student has not seen. Drawing those
inputs from one fixed seed gives every student the same inputs (which can then be shared);
drawing them at random makes a regrade give different grades. So each submission gets its
own seed, a hash of who and what is graded: ``autograde`` puts it in the environment of the
grading process, the kernel inherits it, and a hidden test calls ``hidden_rng()``. Outside
grading (nbval, a student running the notebook) the draws come from a fixed default seed.
"""

import hashlib
import os

import numpy as np

SEED_ENV = "AUTOGRADER_SEED"
# Draws of hidden tests when no grader set a seed: nbval and students' own runs.
DEFAULT_SEED = 20240917


def student_seed(student: str, assignment: str, salt: str = "") -> int:
    """A seed for this student's hidden tests in this assignment, the same on every regrade.

    sha256 rather than ``hash()``: Python salts ``hash`` of strings per process.
    """
    # NUL separators: ("ab", "c") and ("a", "bc") must not give the same seed.
    text = "\0".join([salt, student, assignment]).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1  # a positive int64


def current_seed() -> int:
    """The seed set by the grader in ``AUTOGRADER_SEED``, else the fixed default."""
    value = os.environ.get(SEED_ENV, "").strip()
    if not value:
        return DEFAULT_SEED
    try:
        return int(value)
    except ValueError as error:
        raise ValueError(f"{SEED_ENV}={value!r} is not an integer seed") from error


def hidden_rng() -> np.random.Generator:
    """A fresh generator for a hidden test's inputs: per student when grading, else fixed."""
    return np.random.default_rng(current_seed())
