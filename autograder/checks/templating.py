"""The one way this project writes HTML, in a student's kernel and in the grading wing: jinja2
templates of the package that owns them, autoescaping everything (ids, code and messages come
from students) and refusing an unknown name instead of leaving a blank."""

import functools

import jinja2


def page_environment(package: str) -> jinja2.Environment:
    """Templates of ``package``'s ``templates/`` folder, autoescaped, strict about names."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,  # a misspelt name is an error, not a blank
    )


@functools.cache
def _fragments() -> jinja2.Environment:
    return page_environment("autograder.checks")


def render(template: str, **values: object) -> str:
    """One of the check library's HTML fragments (``autograder/checks/templates``)."""
    return _fragments().get_template(template).render(**values)
