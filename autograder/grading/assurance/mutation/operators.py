"""The mutation operators: classic small mistakes, each a rewrite of one syntax-tree node.

An operator looks at one node and yields ``Rewrite``s: the byte span of source it replaces
and the text that replaces it. Rewriting spans of the original text (instead of unparsing the
whole tree) keeps the rest of the cell, comments included, exactly as written, so a mutant's
diff shows only the mistake.
"""

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Rewrite:
    """Replace ``source[start:end]`` (UTF-8 byte offsets) with ``text``; ``what`` says how."""

    operator: str
    what: str
    start: int
    end: int
    text: str


class Spans:
    """Byte offsets of syntax-tree nodes in one source text."""

    def __init__(self, source: str) -> None:
        self.data = source.encode()
        self.line_starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))

    def start(self, node: ast.AST) -> int:
        return self.line_starts[node.lineno - 1] + node.col_offset

    def end(self, node: ast.AST) -> int:
        return self.line_starts[node.end_lineno - 1] + node.end_col_offset

    def text(self, node: ast.AST) -> str:
        return self.data[self.start(node) : self.end(node)].decode()


# Nodes placed back into their context in parentheses: their precedence may differ from it.
NEEDS_PARENS = (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp, ast.IfExp, ast.Lambda)


def expression_text(node: ast.expr) -> str:
    """``node`` as source that means the same wherever an expression may stand."""
    text = ast.unparse(node)
    return f"({text})" if isinstance(node, NEEDS_PARENS) or text.startswith("-") else text


def replace_node(spans: Spans, node: ast.AST, new: ast.expr, operator: str, what: str) -> Rewrite:
    """A rewrite putting the expression ``new`` where ``node`` is."""
    start, end = spans.start(node), spans.end(node)
    parenthesized = spans.data[start - 1 : start] == b"(" and spans.data[end : end + 1] == b")"
    text = ast.unparse(new) if parenthesized else expression_text(new)
    return Rewrite(operator, what, start, end, text)


ARITHMETIC_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Pow: ast.Mult,
    ast.MatMult: ast.Mult,
    ast.Mod: ast.FloorDiv,
}


def arithmetic(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """An arithmetic operator swapped: + and -, * and /, // to /, ** to *, @ to *."""
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC_SWAPS:
        new_op = ARITHMETIC_SWAPS[type(node.op)]()
        new = ast.BinOp(node.left, new_op, node.right)
        yield replace_node(spans, node, new, "arithmetic", f"{_op(node.op)} to {_op(new_op)}")


def _op(op: ast.AST) -> str:
    """The symbol of a binary or comparison operator, for descriptions."""
    probe = ast.BinOp(ast.Name("a"), op, ast.Name("b"))
    if isinstance(op, ast.cmpop):
        probe = ast.Compare(ast.Name("a"), [op], [ast.Name("b")])
    return ast.unparse(probe)[2:-2]


COMPARISON_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}


def comparison(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """A comparison loosened or tightened (< to <=) or flipped (< to >, == to !=)."""
    if not isinstance(node, ast.Compare):
        return
    for index, op in enumerate(node.ops):
        for new_type in COMPARISON_SWAPS.get(type(op), ()):
            ops = [*node.ops[:index], new_type(), *node.ops[index + 1 :]]
            new = ast.Compare(node.left, ops, node.comparators)
            yield replace_node(spans, node, new, "comparison", f"{_op(op)} to {_op(new_type())}")


def changed_constants(value: object) -> list[object]:
    """The mistaken values of a numeric constant: n-1 and n+1, a float zeroed or plus one."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value - 1, value + 1]
    if isinstance(value, float):
        return [0.0, value + 1.0] if value != 0 else [1.0]
    return []


def constant(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """A numeric or boolean constant changed (n to n-1 or n+1; 0.5 to 0.0 or 1.5)."""
    if isinstance(node, ast.Constant):
        for value in changed_constants(node.value):
            new = ast.Constant(value)
            yield replace_node(spans, node, new, "constant", f"{node.value!r} to {value!r}")


def term_dropped(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """One term of a sum or difference (or operand of and/or) left out."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        for kept, side in ((node.left, "right"), (node.right, "left")):
            yield replace_node(spans, node, kept, "term-dropped", f"{side} term of {_op(node.op)}")
    if isinstance(node, ast.BoolOp):
        name = "and" if isinstance(node.op, ast.And) else "or"
        for index in range(len(node.values)):
            values = [v for i, v in enumerate(node.values) if i != index]
            new = values[0] if len(values) == 1 else ast.BoolOp(node.op, values)
            yield replace_node(spans, node, new, "term-dropped", f"operand {index + 1} of {name}")


def argument_dropped(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """A call's positional argument dropped, or one of its keyword arguments removed."""
    if not isinstance(node, ast.Call):
        return
    for index in range(len(node.args)):
        args = [a for i, a in enumerate(node.args) if i != index]
        new = ast.Call(node.func, args, node.keywords)
        yield replace_node(spans, node, new, "argument-dropped", f"argument {index + 1} dropped")
    for index, keyword in enumerate(node.keywords):
        keywords = [k for i, k in enumerate(node.keywords) if i != index]
        new = ast.Call(node.func, node.args, keywords)
        name = keyword.arg or "**"
        yield replace_node(spans, node, new, "argument-dropped", f"keyword {name}= removed")


def axis_changed(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """``axis=`` moved to another axis (or None), ``keepdims=`` flipped."""
    if not isinstance(node, ast.keyword) or node.arg not in ("axis", "dim", "keepdims", "keepdim"):
        return
    value = node.value
    if node.arg in ("keepdims", "keepdim"):
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            new_value: ast.expr = ast.Constant(not value.value)
        else:
            new_value = ast.UnaryOp(ast.Not(), value)
    elif isinstance(value, ast.Constant) and value.value is None:
        new_value = ast.Constant(0)
    elif isinstance(value, ast.Constant) and value.value == -1:
        new_value = ast.Constant(0)
    elif isinstance(value, ast.Constant):
        new_value = ast.Constant(-1)
    else:
        new_value = ast.Constant(None)
    text = f"{node.arg}={ast.unparse(new_value)}"
    what = f"{node.arg}={ast.unparse(value)} to {text}"
    yield Rewrite("axis", what, spans.start(node), spans.end(node), text)


def augmented_assignment(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """``x += y`` written ``x = y`` (accumulation lost), or its operator swapped."""
    if not isinstance(node, ast.AugAssign):
        return
    target, value = spans.text(node.target), spans.text(node.value)
    yield Rewrite(
        "augmented-assignment",
        f"{_op(node.op)}= to =",
        spans.start(node),
        spans.end(node),
        f"{target} = {value}",
    )
    if type(node.op) in ARITHMETIC_SWAPS:
        new_op = ARITHMETIC_SWAPS[type(node.op)]()
        text = f"{target} {_op(new_op)}= {value}"
        what = f"{_op(node.op)}= to {_op(new_op)}="
        yield Rewrite("arithmetic", what, spans.start(node), spans.end(node), text)


def _is_docstring(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def statement_deleted(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """A statement left out (replaced by ``pass``, so its block stays valid)."""
    if isinstance(node, ast.stmt) and not isinstance(node, ast.Pass) and not _is_docstring(node):
        first_line = spans.text(node).splitlines()[0]
        what = f"deleted: {first_line.strip()[:60]}"
        yield Rewrite("statement-deleted", what, spans.start(node), spans.end(node), "pass")


def _names(node: ast.AST) -> tuple[set[str], set[str], bool]:
    """Names a statement writes, names it reads, and whether it calls anything."""
    written, read, calls = set(), set(), False
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            (written if isinstance(child.ctx, ast.Store | ast.Del) else read).add(child.id)
        elif isinstance(child, ast.Attribute | ast.Subscript) and isinstance(child.ctx, ast.Store):
            written.update(n.id for n in ast.walk(child) if isinstance(n, ast.Name))
        calls = calls or isinstance(child, ast.Call)
    return written, read, calls


def order_matters(first: ast.stmt, second: ast.stmt) -> bool:
    """Whether swapping two statements can change anything: a shared name one of them
    writes, both calling something (side effects), or a statement that leaves the block."""
    leaves = (ast.Return, ast.Raise, ast.Break, ast.Continue)
    if isinstance(first, leaves) or isinstance(second, leaves):
        return True
    written_1, read_1, calls_1 = _names(first)
    written_2, read_2, calls_2 = _names(second)
    shared = written_1 & (read_2 | written_2) or written_2 & read_1
    return bool(shared) or (calls_1 and calls_2)


SWAP_SKIPPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def lines_swapped(first: ast.stmt, second: ast.stmt, spans: Spans) -> Iterator[Rewrite]:
    """Two neighbouring statements of one block in the other order, where order matters.

    Neighbours that share no name and do not both call anything are independent: swapping
    them would only make equivalent mutants, so the operator leaves them alone.
    """
    if isinstance(first, SWAP_SKIPPED) or isinstance(second, SWAP_SKIPPED):
        return
    if _is_docstring(first) or not order_matters(first, second):
        return
    between = spans.data[spans.end(first) : spans.start(second)].decode()
    text = spans.text(second) + between + spans.text(first)
    what = f"swapped with the next line: {spans.text(first).splitlines()[0].strip()[:50]}"
    yield Rewrite("lines-swapped", what, spans.start(first), spans.end(second), text)


NOT_AN_ARRAY = (
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.Constant,
    ast.Compare,
    ast.BoolOp,
    ast.GeneratorExp,
    ast.ListComp,
)


def return_negated(node: ast.AST, spans: Spans) -> Iterator[Rewrite]:
    """A returned value negated or transposed (for values that may be arrays or tensors)."""
    if not isinstance(node, ast.Return) or node.value is None:
        return
    if isinstance(node.value, NOT_AN_ARRAY):
        return
    value = node.value
    for new, what in (
        (ast.UnaryOp(ast.USub(), value), "returned value negated"),
        (ast.Attribute(value, "T", ast.Load()), "returned value transposed"),
    ):
        text = f"return {ast.unparse(new)}"
        yield Rewrite("return-negated", what, spans.start(node), spans.end(node), text)


NodeOperator = Callable[[ast.AST, Spans], Iterator[Rewrite]]

# Every operator on single nodes, by name; lines_swapped works on neighbouring statements.
NODE_OPERATORS: dict[str, NodeOperator] = {
    "arithmetic": arithmetic,
    "comparison": comparison,
    "constant": constant,
    "term-dropped": term_dropped,
    "argument-dropped": argument_dropped,
    "axis": axis_changed,
    "augmented-assignment": augmented_assignment,
    "statement-deleted": statement_deleted,
    "return-negated": return_negated,
}
OPERATOR_NAMES = (*NODE_OPERATORS, "lines-swapped")


def rewrites(source: str, inside: Callable[[ast.AST], bool]) -> Iterator[Rewrite]:
    """Every rewrite of every operator on the nodes of ``source`` that ``inside`` accepts."""
    tree = ast.parse(source)
    spans = Spans(source)
    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or not inside(node):
            continue
        for operator in NODE_OPERATORS.values():
            yield from operator(node, spans)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for first, second in zip(block, block[1:], strict=False):
                if isinstance(first, ast.stmt) and inside(first) and inside(second):
                    yield from lines_swapped(first, second, spans)


def apply(source: str, rewrite: Rewrite) -> str:
    """``source`` with one rewrite made."""
    data = source.encode()
    return (data[: rewrite.start] + rewrite.text.encode() + data[rewrite.end :]).decode()
