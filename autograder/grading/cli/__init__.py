"""``autograd-course``: the instructor's command line over nbgrader.

One module per command, its parser, handler and examples together; ``main`` dispatches.
Course-building commands (release, sync-engine, demo, ...) work on this repository; grading
commands (autograde, feedback, export, report, ...) work on an nbgrader course root given
by ``--root`` (default: the current folder), whose nbgrader_config.py says where things
are. A default path is inside the course a command works on: the repository's build/ for
the first, the course root for the second; a path given on the command line is taken from
the current folder.

``main`` here is the dispatching function (the console script's entry point), which hides
the submodule of the same name as an attribute: reach that one by ``from ... import``.
"""

from autograder.grading.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
