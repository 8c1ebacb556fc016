"""Which lines of a test cell would reveal its hidden tests if they showed up elsewhere."""


def distinctive_hidden_lines(source: str) -> set[str]:
    """Hidden-test lines long enough not to occur by chance and absent from the visible part.

    A line the visible part also has proves nothing when found, so it is left out.
    """
    if "### BEGIN HIDDEN TESTS" not in source:
        return set()
    visible, rest = source.split("### BEGIN HIDDEN TESTS")
    hidden = rest.split("### END HIDDEN TESTS")[0]
    lines = {line.strip() for line in hidden.splitlines()}
    return {line for line in lines if len(line) > 30 and line not in visible}
