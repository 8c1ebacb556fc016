"""Old import path of :mod:`autograder.checks.seed`, kept for notebooks and gradebooks that
name it (nbgrader restores test cells, ``from autograder.grading_seed import hidden_rng``
included, from its database)."""

from autograder.checks.seed import DEFAULT_SEED, SEED_ENV, current_seed, hidden_rng, student_seed

__all__ = ["DEFAULT_SEED", "SEED_ENV", "current_seed", "hidden_rng", "student_seed"]
