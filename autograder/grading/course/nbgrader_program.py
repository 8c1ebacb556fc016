"""``python -m autograder.grading.course.nbgrader_program ARGS``: the ``nbgrader`` command,
with a new gradebook's schema version read from nbgrader's migration scripts rather than
from an ``alembic heads`` process (about a second of CPU for each command that makes one)."""

from autograder.grading.course.schema_head import read_schema_head_in_process


def main() -> None:
    """Run nbgrader's own command line, as ``python -m nbgrader`` does."""
    read_schema_head_in_process()
    from nbgrader.apps.nbgraderapp import main as nbgrader_main

    nbgrader_main()


if __name__ == "__main__":
    main()
