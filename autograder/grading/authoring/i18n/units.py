"""The translatable units of a notebook, and how a translation goes back into a cell.

A unit is one piece of English prose, the msgid of a catalog entry:

- a markdown cell: its whole source;
- in a code cell, outside ``### BEGIN SOLUTION`` and hidden-test blocks (what students never
  see in the release): a comment (consecutive full-line comments at one indentation are one
  unit, their lines joined with a newline, so a sentence split over lines is translated
  whole) and a docstring (the text between its triple quotes, as written).

- in a code cell, outside ``### BEGIN SOLUTION`` blocks (hidden tests included: their failures
  reach the student in the feedback): a message string, the text between the quotes of a string
  a student reads when the code runs: a check's label and hint (``what=``, ``hint=``, a
  string passed to a ``check_*`` function), an assertion's message, ``AssertionError(...)``,
  ``print(...)``'s strings, a plot's title, axis labels and legend labels, a string assigned
  to ``hint``, ``advice``, ``rule`` or ``message``, and any string marked with
  ``autograder.label(...)`` (a name in a table, a key both sides of a check share). An
  f-string is one unit with its ``{fields}``, which its translation must keep.

Given engine cells (``engine.given``: the reference engine of autograder/engine/ verbatim,
shown collapsed) are not translated: they keep the engine's own docstrings.
Comments without letters, tool directives (``noqa``, ``type:``) and nbgrader's markers are
code, not prose. Everything else in a code cell (identifiers, strings the code uses, tests,
points) is shared by both editions unchanged.
"""

import ast
import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass

import nbformat

_BLOCK_BEGIN = ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS")
_BLOCK_END = ("END SOLUTION", "END HIDDEN TESTS")
# Comments that are instructions to tools, not to students.
_DIRECTIVE = re.compile(r"^\s*(noqa|type:|fmt:|pragma|pylint|ruff|#+\s*(BEGIN|END)\b)")
_LETTERS = re.compile(r"[A-Za-z]{2}")


@dataclass(frozen=True)
class Comment:
    """A run of full-line comments (or one trailing comment) in a code cell."""

    first_line: int  # 0-based line of the cell
    last_line: int
    column: int  # where '#' is
    text: str  # the comments' text, '# ' removed, lines joined with '\n'
    trailing: bool  # after code on its line


def _outside_blocks(source: str, begins: tuple[str, ...], ends: tuple[str, ...]) -> list[bool]:
    """Per line of ``source``: True outside the blocks that ``begins`` and ``ends`` mark."""
    outside, inside = [], False
    for line in source.split("\n"):
        if any(marker in line for marker in begins):
            inside = True
        outside.append(not inside)
        if any(marker in line for marker in ends):
            inside = False
    return outside


def _shown_lines(source: str) -> list[bool]:
    """Per line of ``source``: True when a student sees it (outside solution/hidden blocks)."""
    return _outside_blocks(source, _BLOCK_BEGIN, _BLOCK_END)


def _is_prose(text: str) -> bool:
    return bool(_LETTERS.search(text)) and not _DIRECTIVE.match(text)


def comments(source: str) -> list[Comment]:
    """The prose comments of a code cell that students see, runs of full lines merged."""
    shown = _shown_lines(source)
    lines = source.split("\n")
    found: list[Comment] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []  # not Python (e.g. a cell magic): no comment is read as prose
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        row, column = token.start[0] - 1, token.start[1]
        text = token.string.lstrip("#").strip()
        if not shown[row] or not _is_prose(token.string.lstrip("#")):
            continue
        trailing = bool(lines[row][:column].strip())
        previous = found[-1] if found else None
        if (
            previous is not None
            and not trailing
            and not previous.trailing
            and previous.last_line == row - 1
            and previous.column == column
        ):
            found[-1] = Comment(
                previous.first_line, row, column, f"{previous.text}\n{text}", trailing=False
            )
        else:
            found.append(Comment(row, row, column, text, trailing))
    return found


@dataclass(frozen=True)
class Docstring:
    """A docstring: the text between its quotes as written, and where that text is."""

    start: int  # offset in the cell's source of the text (after the opening quotes)
    end: int
    text: str


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None  # not Python (a cell magic): none of it is read as prose


def _line_offsets(source: str) -> list[int]:
    """Where each line of ``source`` starts, as an offset into it."""
    offsets = [0]
    for line in source.split("\n"):
        offsets.append(offsets[-1] + len(line) + 1)
    return offsets


def docstrings(source: str) -> list[Docstring]:
    """The docstrings of the functions and classes a student sees in a code cell."""
    tree = _parsed(source)
    if tree is None:
        return []
    shown = _shown_lines(source)
    offsets = _line_offsets(source)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        first = node.body[0] if node.body else None
        if not (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            continue
        if not shown[first.lineno - 1]:
            continue
        literal_start = offsets[first.lineno - 1] + _char_column(source, first, first.col_offset)
        literal_end = offsets[first.end_lineno - 1] + _char_column(
            source, first, first.end_col_offset, end=True
        )
        prefix, quote = _prefix_and_quote(source[literal_start:literal_end])
        text_start = literal_start + len(prefix) + len(quote)
        text_end = literal_end - len(quote)
        text = source[text_start:text_end]
        if _is_prose(text):
            found.append(Docstring(text_start, text_end, text))
    return sorted(found, key=lambda d: d.start)


def _prefix_and_quote(literal: str) -> tuple[str, str]:
    """A string literal's prefix (``f``, ``r``...) and its quotes (one or three)."""
    prefix = 0
    while literal[prefix] not in "\"'":
        prefix += 1
    opening = literal[prefix : prefix + 3]
    return literal[:prefix], opening if opening in ('"""', "'''") else literal[prefix]


def _char_column(source: str, node: ast.AST, byte_column: int, end: bool = False) -> int:
    """ast's UTF-8 byte column on the node's line as a character column."""
    line_number = node.end_lineno if end else node.lineno
    line = source.split("\n")[line_number - 1]
    return len(line.encode("utf-8")[:byte_column].decode("utf-8"))


# Calls whose positional string arguments a student reads, and keywords whose string values
# are labels: everything else a string does in the code (a dict key, torch's message to
# match, a dtype name) stays as written.
_MESSAGE_CALLS = frozenset(
    {"print", "AssertionError", "check_array", "title", "suptitle", "xlabel", "ylabel"}
    | {"set_title", "set_xlabel", "set_ylabel", "label"}
)
_MESSAGE_KEYWORDS = frozenset({"what", "hint", "case", "label", "title", "xlabel", "ylabel"})
# A string assigned to a variable of one of these names is a message too.
_MESSAGE_VARIABLES = frozenset({"hint", "advice", "rule", "message"})
_FIELD = re.compile(r"{[^{}]*}")


@dataclass(frozen=True)
class Message:
    """A message string in a code cell: the text between its quotes as written, and where."""

    start: int  # offset in the cell's source of the text (after the opening quotes)
    end: int
    text: str
    formatted: bool  # an f-string: its {fields} are code
    # Several literals side by side ("a" "b"): the span holds them all, quotes included, and
    # a translation is written back as one literal between these.
    opening: str = ""
    closing: str = ""


def _called_name(call: ast.Call) -> str | None:
    function = call.func
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None


def is_message(node: ast.AST, parent: ast.AST | None) -> bool:
    """Whether a string node is a message a student reads (see the module's docstring)."""
    if not isinstance(node, ast.JoinedStr | ast.Constant):
        return False
    if isinstance(node, ast.Constant) and not isinstance(node.value, str):
        return False
    if isinstance(parent, ast.keyword):
        return parent.arg in _MESSAGE_KEYWORDS
    if isinstance(parent, ast.Assert):
        return parent.msg is node
    if isinstance(parent, ast.Assign):
        names = [t.id for t in parent.targets if isinstance(t, ast.Name)]
        return parent.value is node and bool(names) and set(names) <= _MESSAGE_VARIABLES
    if isinstance(parent, ast.Call):
        name = _called_name(parent) or ""
        return node in parent.args and (name in _MESSAGE_CALLS or name.startswith("check_"))
    return False


def _outside_solutions(source: str) -> list[bool]:
    """Per line of ``source``: True outside ``### BEGIN SOLUTION`` blocks (hidden tests
    included: students read their messages in the feedback)."""
    return _outside_blocks(source, _BLOCK_BEGIN[:1], _BLOCK_END[:1])


def messages(source: str) -> list[Message]:
    """The message strings of a code cell, outside solution blocks, in order.

    A message written as several literals side by side (a long sentence over several lines)
    is one unit, their texts joined, when they share their quotes and their f prefix.
    """
    tree = _parsed(source)
    if tree is None:
        return []
    outside = _outside_solutions(source)
    offsets = _line_offsets(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not is_message(node, parents.get(node)) or not outside[node.lineno - 1]:
            continue
        start = offsets[node.lineno - 1] + _char_column(source, node, node.col_offset)
        end = offsets[node.end_lineno - 1] + _char_column(source, node, node.end_col_offset, True)
        message = _message(source[start:end], start)
        if message is not None and _is_prose(message.text):
            found.append(message)
    return sorted(found, key=lambda m: m.start)


def _message(literal: str, start: int) -> Message | None:
    """The message of one string expression's source (at ``start`` in its cell), or None
    when it is not one plain sentence: literals with different quotes or prefixes, a
    comment among them, a byte string."""
    try:
        # In parentheses, as the literals stand in the code: line breaks between them are
        # no statements.
        tokens = list(tokenize.generate_tokens(io.StringIO(f"({literal})").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    kinds = {tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.OP}
    if [t.string for t in tokens if t.type == tokenize.OP] != ["(", ")"]:
        return None
    if any(t.type not in kinds for t in tokens):
        return None
    parts = []
    for token in (t for t in tokens if t.type == tokenize.STRING):
        prefix, quote = _prefix_and_quote(token.string)
        parts.append((prefix.lower(), quote, token.string[len(prefix) + len(quote) : -len(quote)]))
    prefixes = {prefix for prefix, _, _ in parts}
    if len({quote for _, quote, _ in parts}) != 1 or any("b" in p or "r" in p for p in prefixes):
        return None
    prefix, quote, _ = parts[0]
    formatted = any("f" in p for p in prefixes)
    if len(parts) == 1:
        inner = start + literal.index(quote) + len(quote)
        return Message(inner, start + len(literal) - len(quote), parts[0][2], formatted)
    # One literal in the end: an f-string when any part is one, its plain parts' braces
    # doubled so that they stay braces.
    joined = "".join(
        text.replace("{", "{{").replace("}", "}}") if formatted and "f" not in p else text
        for p, _, text in parts
    )
    return Message(
        start, start + len(literal), joined, formatted,
        opening=("f" if formatted else "") + quote, closing=quote,
    )  # fmt: skip


def fields(text: str) -> list[str]:
    """The ``{fields}`` of an f-string's text, in order (``{{``/``}}`` are no fields)."""
    return _FIELD.findall(text.replace("{{", "").replace("}}", ""))


def is_given_engine(cell: nbformat.NotebookNode) -> bool:
    """A given engine cell: the reference engine verbatim, shown collapsed, kept in English."""
    return bool((cell.metadata.get("engine") or {}).get("given"))


def cell_units(cell: nbformat.NotebookNode) -> list[str]:
    """The msgids of one cell, in order of appearance."""
    if cell.cell_type == "markdown":
        return [cell.source] if cell.source.strip() else []
    if cell.cell_type != "code" or is_given_engine(cell):
        return []
    found = [(c.first_line, c.text) for c in comments(cell.source)]
    starts = _line_of(cell.source)
    found += [(starts(d.start), d.text) for d in docstrings(cell.source)]
    found += [(starts(m.start), m.text) for m in messages(cell.source)]
    return [text for _, text in sorted(found, key=lambda item: item[0])]


def notebook_units(notebook: nbformat.NotebookNode) -> list[tuple[str, int]]:
    """(msgid, cell index) for every unit of a notebook, in order; a repeated msgid once."""
    seen: set[str] = set()
    units = []
    for index, cell in enumerate(notebook.cells):
        for text in cell_units(cell):
            if text not in seen:
                seen.add(text)
                units.append((text, index))
    return units


def _line_of(source: str) -> Callable[[int], int]:
    def line(offset: int) -> int:
        return source.count("\n", 0, offset)

    return line


Translate = Callable[[str], str]


def translate_cell(cell: nbformat.NotebookNode, translate: Translate) -> None:
    """Put each unit's translation into ``cell`` (in place); code stays as it is."""
    if cell.cell_type == "markdown":
        if cell.source.strip():
            cell.source = translate(cell.source)
        return
    if cell.cell_type != "code" or is_given_engine(cell):
        return
    source = cell.source
    # Docstrings and messages first, from the end, so earlier offsets stay valid; they never
    # hold a comment token, and comments are then found again in the new source.
    strings: list[Docstring | Message] = [*docstrings(source), *messages(source)]
    for string in sorted(strings, key=lambda s: s.start, reverse=True):
        translated = translate(string.text)
        if isinstance(string, Message) and string.formatted:
            if sorted(fields(translated)) != sorted(fields(string.text)):
                raise ValueError(
                    f"the translation of {string.text!r} must keep its fields "
                    f"{fields(string.text)}; it has {fields(translated)}"
                )
        if isinstance(string, Message):
            translated = string.opening + translated + string.closing
        source = source[: string.start] + translated + source[string.end :]
    lines = source.split("\n")
    for comment in reversed(comments(source)):
        translated = translate(comment.text)
        if comment.trailing:
            line = lines[comment.first_line]
            code = line[: comment.column]
            lines[comment.first_line] = f"{code}# {translated}"
            continue
        indent = lines[comment.first_line][: comment.column]
        new = [f"{indent}# {text}".rstrip() for text in translated.split("\n")]
        lines[comment.first_line : comment.last_line + 1] = new
    parsed_before = _parses(cell.source)
    cell.source = "\n".join(lines)
    if parsed_before and not _parses(cell.source):
        raise ValueError(f"a translation broke the code of this cell (a quote?):\n{cell.source}")


def _parses(source: str) -> bool:
    return _parsed(source) is not None
