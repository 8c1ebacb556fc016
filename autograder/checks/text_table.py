"""Plain-text tables: columns padded to their widest cell, a dashed rule under the header.

The one table layout of the package (progress cell, demo and red-team tables, gpu-check,
benchmarks), and ``read_columns`` to read one back: the rule's dash runs mark where each
column starts and ends, so cells may hold spaces and tests can check rows, not just text.
"""

from collections.abc import Collection, Sequence

GAP = "  "  # between columns


def format_columns(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    right: Collection[int] = (),
    indent: str = "",
) -> list[str]:
    """Lines of a table; columns whose index is in ``right`` are right-aligned (numbers)."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = [
            str(v).rjust(w) if i in right else str(v).ljust(w)
            for i, (v, w) in enumerate(zip(row, widths, strict=True))
        ]
        return (indent + GAP.join(cells)).rstrip()

    return [line(header), indent + GAP.join("-" * w for w in widths), *map(line, rows)]


def read_columns(text: str) -> list[dict[str, str]]:
    """The rows of the first table in ``text`` (as ``format_columns`` wrote it), by header.

    Rows end at the first blank line, so a footer below the table is not read as rows.
    """
    lines = text.splitlines()
    rule_at = next(
        (i for i, line in enumerate(lines) if i and "-" in line and set(line) <= {"-", " "}),
        None,
    )
    if rule_at is None:
        raise ValueError("no table found: no line of dashes under a header")
    rule = lines[rule_at]
    spans = []
    start = None
    for position, char in enumerate(rule + " "):
        if char == "-" and start is None:
            start = position
        elif char != "-" and start is not None:
            spans.append((start, position))
            start = None
    # The last column may run on past its dashes only if the row is longer; take it all.
    spans[-1] = (spans[-1][0], None)

    def cells(line: str) -> list[str]:
        return [line[begin:end].strip() for begin, end in spans]

    header = cells(lines[rule_at - 1])
    rows = []
    for line in lines[rule_at + 1 :]:
        if not line.strip():
            break
        rows.append(dict(zip(header, cells(line), strict=True)))
    return rows
