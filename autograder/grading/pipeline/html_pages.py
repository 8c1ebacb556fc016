"""The one way the grading wing writes an HTML page: a jinja2 template of the package that
owns the page, autoescaping everything (ids, code and messages come from students) and
refusing an unknown name instead of leaving a blank."""

import jinja2


def page_environment(package: str) -> jinja2.Environment:
    """Templates of ``package``'s ``templates/`` folder, autoescaped, strict about names."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,  # a misspelt name is an error, not a blank
    )
