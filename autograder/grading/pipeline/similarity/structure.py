"""A second measure of copying, on the syntax tree: the expressions two authors share.

Token fingerprints (``compare``) see a copy whose statements were reordered, or whose loop
became a comprehension, as new code. The expressions inside survive such a disguise: the
same arithmetic, calls and subscripts, with other names. Each author's expressions of at
least ``MIN_NODES`` tree nodes are reduced to their shape (every name the same, attribute
names and constants kept) and counted as a bag; what the release hands out and, between two
students, what the reference solution holds too, is taken out first, since code the text
leads everyone to write is no evidence. A pair's score is the larger side's share of its
own shapes found in the other.
"""

import ast
import hashlib
from collections import Counter
from collections.abc import Iterable

TEXT = (ast.JoinedStr, ast.FormattedValue)
MIN_NODES = 8  # smaller expressions (``a + b``, ``x.grad``) say nothing about who wrote them


def _written(node: object, found: dict[int, tuple[str, int]]) -> tuple[str, int]:
    """(the shape of ``node`` as text, its tree nodes), every name the same; each expression
    inside it recorded in ``found`` on the way (one pass over the tree, bottom up)."""
    if isinstance(node, ast.Name | ast.arg):
        return "_", 1
    if isinstance(node, list):
        parts = [_written(item, found) for item in node]
        return "[" + ",".join(text for text, _ in parts) + "]", sum(n for _, n in parts)
    if not isinstance(node, ast.AST):
        return repr(node), 0
    parts = [_written(value, found) for _, value in ast.iter_fields(node)]
    text = type(node).__name__ + "(" + ",".join(t for t, _ in parts) + ")"
    size = 1 + sum(n for _, n in parts)
    if isinstance(node, ast.expr):
        found[id(node)] = (text, size)
    return text, size


def shapes(sources: Iterable[str]) -> Counter[str]:
    """The bag of expression shapes of ``sources`` (code that does not parse adds none)."""
    bag: Counter[str] = Counter()
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        found: dict[int, tuple[str, int]] = {}
        _written(tree, found)
        for node in ast.walk(tree):
            if isinstance(node, ast.expr) and not isinstance(node, TEXT) and id(node) in found:
                text, size = found[id(node)]
                if size >= MIN_NODES:
                    bag[hashlib.blake2b(text.encode(), digest_size=8).hexdigest()] += 1
    return bag


def without(bag: Counter[str], common: Iterable[str]) -> Counter[str]:
    """``bag`` less every shape in ``common``."""
    drop = set(common)
    return Counter({shape: n for shape, n in bag.items() if shape not in drop})


def structure_score(a: Counter[str], b: Counter[str]) -> tuple[float, int]:
    """(the larger side's share of its shapes found in the other, the shapes shared)."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    shared = sum(min(n, large[shape]) for shape, n in small.items() if shape in large)
    if not shared:
        return 0.0, 0
    return max(shared / a.total(), shared / b.total()), shared
