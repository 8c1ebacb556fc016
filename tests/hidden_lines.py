"""Which lines of a test cell would reveal its hidden tests if they showed up elsewhere."""

from autograder.checks.hidden_tests import split_hidden_tests


def distinctive_hidden_lines(source: str) -> set[str]:
    """Hidden-test lines long enough not to occur by chance and absent from the visible part.

    A line the visible part also has proves nothing when found, so it is left out.
    """
    visible, blocks = split_hidden_tests(source)
    lines = {line.strip() for block in blocks for line in block.splitlines()}
    return {line for line in lines if len(line) > 30 and line not in visible}
