"""The grading wing's pages use the project's one HTML writer (jinja2, autoescaped, strict):
it lives in the check library, which a student's kernel also uses for its fragments."""

from autograder.checks.templating import page_environment

__all__ = ["page_environment"]
