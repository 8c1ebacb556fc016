"""Plain-text tables for the command line: columns padded, a rule under the header."""


def format_columns(header: list[str], rows: list[list[str]]) -> list[str]:
    """Lines of a table; the last column is not padded, so long verdicts can run on."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        padded = [value.ljust(width) for value, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*padded, row[-1]]))
    lines.insert(1, "-" * len(lines[0]))
    return lines
