"""nbgrader's hidden-test blocks in a test cell's source, read the way nbgrader reads them.

nbgrader's ClearHiddenTests works on lines: a line holding ``BEGIN HIDDEN TESTS`` opens a
block, a line holding ``END HIDDEN TESTS`` closes it, and both lines go with the block. The
progress cell, the integrity scan and the tests all split cells here, so they agree with
what nbgrader releases.
"""

BEGIN = "BEGIN HIDDEN TESTS"
END = "END HIDDEN TESTS"


def split_hidden_tests(source: str) -> tuple[str, list[str]]:
    """(the source as released, without its hidden blocks; each block's lines, delimiters cut).

    A block left open or opened twice is an error, as it is for nbgrader.
    """
    visible: list[str] = []
    blocks: list[list[str]] = []
    inside = False
    for line in source.split("\n"):
        if BEGIN in line:
            if inside:
                raise ValueError(f"hidden tests opened twice without {END!r}: {line.strip()!r}")
            inside = True
            blocks.append([])
        elif END in line:
            inside = False
        elif inside:
            blocks[-1].append(line)
        else:
            visible.append(line)
    if inside:
        raise ValueError(f"hidden tests opened but never closed with {END!r}")
    return "\n".join(visible), ["\n".join(block) for block in blocks]
