"""A copier's disguise, for the similarity tests: rewrite code through its syntax tree.

Renames every local name and argument (a text replace would also hit strings and
attributes), drops the comments and writes new ones, moves blank lines, swaps the first
two adjacent function definitions of a body (independent: definitions do not run),
inlines small helper functions at their call sites and splits the longest function into a
wrapper and a module-level helper.
"""

import ast
import copy
from collections.abc import Iterator

KEEP = {"self", "cls"}


class RenameLocals(ast.NodeTransformer):
    """Give each function's arguments and assigned names new names, consistently.

    A method's arguments keep their names: callers in other cells pass them by keyword
    (``Pow.apply(x, exponent=2)``, ``Linear(3, 1, rng=rng)``), and a copy must still run.
    """

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.methods: set[int] = set()

    def new_name(self, name: str) -> str:
        """The new name of ``name``, the same at every use."""
        return self.names.setdefault(name, f"q{len(self.names)}_{name[::-1].strip('_')}")

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        """Note the class's methods, then rename inside them."""
        self.methods |= {id(s) for s in node.body if isinstance(s, ast.FunctionDef)}
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        """Rename the function's locals (and its arguments unless it is a method)."""
        declared = {n for s in ast.walk(node) if isinstance(s, ast.Global) for n in s.names}
        if id(node) in self.methods:
            declared |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        local = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        local |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        local -= KEEP | declared
        for child in ast.walk(node):
            if isinstance(child, ast.arg) and child.arg in local:
                child.arg = self.new_name(child.arg)
            elif isinstance(child, ast.Name) and child.id in local:
                child.id = self.new_name(child.id)
        return node


def swap_first_definitions(body: list[ast.stmt]) -> bool:
    """Swap the last two adjacent function definitions of ``body`` (or of a class in it)."""
    for index in reversed(range(len(body) - 1)):
        if all(isinstance(s, ast.FunctionDef) for s in body[index : index + 2]):
            body[index], body[index + 1] = body[index + 1], body[index]
            return True
    return any(swap_first_definitions(s.body) for s in body if isinstance(s, ast.ClassDef))


def split_longest(tree: ast.Module) -> None:
    """Move the longest function's body into a module-level helper the function calls."""
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    if not functions:
        return
    longest = max(functions, key=lambda f: len(ast.unparse(f)))
    helper = ast.FunctionDef(
        name=f"_{longest.name.strip('_')}_steps",
        args=longest.args,
        body=longest.body,
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    call = ast.Call(
        func=ast.Name(helper.name, ast.Load()),
        args=[ast.Name(a.arg, ast.Load()) for a in longest.args.args],
        keywords=[],
    )
    longest.body = [ast.Return(call)]
    tree.body.append(helper)


MAX_HELPER_STATEMENTS = 12  # "small": a helper up to this many statements is inlined
CONDITIONAL = (ast.Lambda, ast.IfExp, ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp)
CONDITIONAL += (ast.GeneratorExp,)
SIMPLE = (ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def returns_only_under_ifs(body: list[ast.stmt]) -> bool:
    """Whether every ``return`` of ``body`` sits in it directly or in ``if`` branches only."""
    for statement in body:
        if isinstance(statement, ast.If):
            if not (
                returns_only_under_ifs(statement.body) and returns_only_under_ifs(statement.orelse)
            ):
                return False
        elif not isinstance(statement, ast.Return):
            if any(isinstance(node, ast.Return) for node in ast.walk(statement)):
                return False
    return True


def inlinable(function: ast.FunctionDef) -> bool:
    """A small, plain helper: positional arguments, straight code or ``if``s, no recursion."""
    arguments = function.args
    if function.decorator_list or arguments.vararg or arguments.kwarg:
        return False
    if not all(isinstance(default, ast.Constant) for default in arguments.defaults):
        return False
    if arguments.kwonlyargs or arguments.posonlyargs:
        return False
    statements = [n for n in ast.walk(function) if isinstance(n, ast.stmt)]
    if len(statements) - 1 > MAX_HELPER_STATEMENTS:
        return False
    forbidden = (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.ClassDef)
    for node in ast.walk(function):
        if node is function:
            continue
        if isinstance(node, forbidden + (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if isinstance(node, ast.Name) and node.id == function.name:
            return False  # recursive
    return returns_only_under_ifs(function.body)


def assigned_names(function: ast.FunctionDef) -> set[str]:
    """The function's local names: its arguments and every name it stores."""
    names = {a.arg for a in function.args.args}
    stored = (ast.Store, ast.Del)
    return names | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, stored)
    }


def free_names(function: ast.FunctionDef) -> set[str]:
    """Names the function reads but does not define (globals or an enclosing scope's)."""
    read = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    return read - assigned_names(function)


def tail_assign(body: list[ast.stmt], target: str) -> list[ast.stmt]:
    """``body`` with each ``return X`` turned into ``target = X`` and the code after an ``if``
    that returns moved into its branches, so that nothing is skipped by a missing return."""
    out: list[ast.stmt] = []
    for index, statement in enumerate(body):
        if isinstance(statement, ast.Return):
            value = statement.value or ast.Constant(None)
            return [*out, ast.Assign([ast.Name(target, ast.Store())], value)]
        if isinstance(statement, ast.If) and any(
            isinstance(n, ast.Return) for n in ast.walk(statement)
        ):
            rest = body[index + 1 :]
            branch = tail_assign(statement.body + copy.deepcopy(rest), target)
            other = tail_assign(statement.orelse + copy.deepcopy(rest), target)
            return [*out, ast.If(statement.test, branch, other)]
        out.append(statement)
    return [*out, ast.Assign([ast.Name(target, ast.Store())], ast.Constant(None))]


class Substitute(ast.NodeTransformer):
    """Replace given nodes (by identity) with others."""

    def __init__(self, replacements: dict[int, ast.AST]) -> None:
        self.replacements = replacements

    def visit(self, node: ast.AST) -> ast.AST:
        """The replacement of ``node``, or ``node`` with its children visited."""
        if id(node) in self.replacements:
            return self.replacements[id(node)]
        return self.generic_visit(node)


class Inliner:
    """Replace calls of one helper by its body, hoisted before the calling statement."""

    def __init__(self, helper: ast.FunctionDef, shadowed: set[str]) -> None:
        self.helper = helper
        self.shadowed = shadowed  # a caller must not define a name the helper reads
        self.count = 0
        self.required = len(helper.args.args) - len(helper.args.defaults)

    def calls_in(self, statement: ast.stmt) -> Iterator[ast.Call]:
        """Calls of the helper that always run when ``statement`` does."""
        stack: list[ast.AST] = [statement]
        while stack:
            node = stack.pop()
            if isinstance(node, CONDITIONAL):
                continue
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == self.helper.name
                and self.required <= len(node.args) <= len(self.helper.args.args)
                and not node.keywords
                and not any(isinstance(a, ast.Starred) for a in node.args)
            ):
                yield node
                continue
            stack.extend(ast.iter_child_nodes(node))

    def expand(self, call: ast.Call) -> tuple[list[ast.stmt], str]:
        """The helper's body for this call's arguments, and the name holding its result."""
        self.count += 1
        prefix = f"{self.helper.name.strip('_')}{self.count}_"
        body = copy.deepcopy(self.helper.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        renames = {name: prefix + name for name in assigned_names(self.helper)}
        bindings: list[ast.stmt] = []
        stored = assigned_names(self.helper) - {a.arg for a in self.helper.args.args}
        defaults = [copy.deepcopy(d) for d in self.helper.args.defaults]
        arguments = [*call.args, *defaults[len(call.args) - self.required :]]
        for parameter, argument in zip(self.helper.args.args, arguments, strict=True):
            if isinstance(argument, ast.Name) and parameter.arg not in stored:
                renames[parameter.arg] = argument.id  # a plain name: use it directly
            else:
                target = ast.Name(renames[parameter.arg], ast.Store())
                bindings.append(ast.Assign([target], argument))
        module = ast.Module(body, [])
        for node in ast.walk(module):
            if isinstance(node, ast.Name) and node.id in renames:
                node.id = renames[node.id]
        result = prefix + "result"
        return bindings + tail_assign(module.body, result), result

    def rewrite(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """``body`` with the helper's calls in its simple statements inlined."""
        out: list[ast.stmt] = []
        for statement in body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                if statement is not self.helper:
                    names = assigned_names(statement)
                    if not names & self.shadowed:
                        statement.body = self.rewrite(statement.body)
                out.append(statement)
                continue
            if isinstance(statement, ast.ClassDef):
                statement.body = self.rewrite(statement.body)
                out.append(statement)
                continue
            if not isinstance(statement, SIMPLE):
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(statement, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        setattr(statement, field, self.rewrite(inner))
                out.append(statement)
                continue
            results: dict[int, ast.Name] = {}
            for call in list(self.calls_in(statement)):
                code, result = self.expand(call)
                out += code
                results[id(call)] = ast.Name(result, ast.Load())
            statement = Substitute(results).visit(statement)
            is_bare_name = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Name)
            if not is_bare_name:
                out.append(statement)
        return out


def helpers(tree: ast.Module) -> Iterator[tuple[list[ast.stmt], ast.FunctionDef]]:
    """(the body that defines it, the helper) for every small helper, module-level or nested."""
    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)]
    for body in [tree.body, *(f.body for f in functions)]:
        for statement in body:
            if isinstance(statement, ast.FunctionDef) and inlinable(statement):
                yield body, statement


def inline_helpers(tree: ast.Module) -> int:
    """Inline every small helper function at its call sites; a helper no longer called is
    removed. The number of calls inlined."""
    inlined = 0
    for body, helper in list(helpers(tree)):
        inliner = Inliner(helper, free_names(helper))
        body[:] = inliner.rewrite(body)
        inlined += inliner.count
        still_used = any(
            isinstance(n, ast.Name) and n.id == helper.name
            for statement in body
            if statement is not helper
            for n in ast.walk(statement)
        )
        if inliner.count and not still_used and helper in body:
            body.remove(helper)
    return inlined


def recomment(code: str) -> str:
    """New comments and blank lines: one note above every definition, a blank after it."""
    out = []
    for line in code.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("def ", "class ")):
            indent = line[: len(line) - len(stripped)]
            out += ["", f"{indent}# written from scratch, honest"]
        out.append(line)
        if stripped.startswith(("return ", "for ", "if ")):
            out.append("")
    return "\n".join(out) + "\n"


def disguise(code: str, split: bool = True, inline: bool = False) -> str:
    """``code`` as a copier would hand it in: inlined, renamed, recommented, reordered, split."""
    tree = ast.parse(code)
    if inline:
        inline_helpers(tree)
        ast.fix_missing_locations(tree)
    tree = RenameLocals().visit(tree)
    swap_first_definitions(tree.body)
    if split:
        split_longest(tree)
    return recomment(ast.unparse(ast.fix_missing_locations(tree)))


# A medium disguise: independent statements reordered and equivalent constructs swapped
# (a comprehension and its loop, an if/else and its conditional expression), on top of the
# renames and new comments.


def names_in(node: ast.AST) -> tuple[set[str], set[str]]:
    """(names ``node`` reads, names it binds)."""
    read, bound = set(), set()
    for each in ast.walk(node):
        if isinstance(each, ast.Name):
            (bound if isinstance(each.ctx, ast.Store) else read).add(each.id)
        elif isinstance(each, ast.Attribute | ast.Subscript) and isinstance(each.ctx, ast.Store):
            bound.add(ast.unparse(each))
    return read, bound


def independent(first: ast.stmt, second: ast.stmt) -> bool:
    """Two simple assignments that may run in either order: neither reads or binds what the
    other binds, and neither calls anything (a call may touch anything)."""
    simple = (ast.Assign, ast.AnnAssign)
    if not (isinstance(first, simple) and isinstance(second, simple)):
        return False
    if any(isinstance(n, ast.Call) for s in (first, second) for n in ast.walk(s)):
        return False
    read_1, bound_1 = names_in(first)
    read_2, bound_2 = names_in(second)
    return not (bound_1 & (read_2 | bound_2) or bound_2 & read_1)


class Reorder(ast.NodeTransformer):
    """Swap every run of two independent simple assignments."""

    def __init__(self) -> None:
        self.swapped = 0

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                index = 0
                while index + 1 < len(body):
                    if independent(body[index], body[index + 1]):
                        body[index], body[index + 1] = body[index + 1], body[index]
                        self.swapped += 1
                        index += 2
                    else:
                        index += 1
        return node


class SwapConstructs(ast.NodeTransformer):
    """``v = [e for x in it]`` as a loop; ``v = a if c else b`` as an if/else; and back:
    a one-assignment if/else as a conditional expression."""

    def __init__(self) -> None:
        self.swapped = 0

    def visit_Assign(self, node: ast.Assign):  # noqa: N802, ANN201 (ast's names)
        self.generic_visit(node)
        [target] = node.targets if len(node.targets) == 1 else [None]
        value = node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.ListComp):
            [generator] = value.generators if len(value.generators) == 1 else [None]
            if generator is not None and not generator.ifs and not generator.is_async:
                self.swapped += 1
                append = ast.Expr(ast.Call(
                    ast.Attribute(ast.Name(target.id, ast.Load()), "append", ast.Load()),
                    [value.elt], [],
                ))  # fmt: skip
                loop = ast.For(generator.target, generator.iter, [append], [])
                return [ast.Assign([ast.Name(target.id, ast.Store())], ast.List([], ast.Load())),
                        loop]  # fmt: skip
        if isinstance(target, ast.Name) and isinstance(value, ast.IfExp):
            self.swapped += 1
            return ast.If(
                value.test,
                [ast.Assign([ast.Name(target.id, ast.Store())], value.body)],
                [ast.Assign([ast.Name(target.id, ast.Store())], value.orelse)],
            )
        return node

    def visit_If(self, node: ast.If):  # noqa: N802, ANN201
        self.generic_visit(node)
        one = [node.body, node.orelse]
        if all(len(b) == 1 and isinstance(b[0], ast.Assign) for b in one):
            (left,), (right,) = node.body[0].targets, node.orelse[0].targets
            if isinstance(left, ast.Name) and isinstance(right, ast.Name) and left.id == right.id:
                self.swapped += 1
                expression = ast.IfExp(node.test, node.body[0].value, node.orelse[0].value)
                return ast.Assign([ast.Name(left.id, ast.Store())], expression)
        return node


def reorder_and_swap(code: str) -> tuple[str, int]:
    """``code`` with independent statements reordered, equivalent constructs swapped,
    renamed and recommented; and how many reorders and swaps were made."""
    tree = ast.parse(code)
    reorder, swap = Reorder(), SwapConstructs()
    tree = swap.visit(reorder.visit(tree))
    tree = RenameLocals().visit(ast.fix_missing_locations(tree))
    return recomment(ast.unparse(ast.fix_missing_locations(tree))), reorder.swapped + swap.swapped
