"""A copier's disguise, for the similarity tests: rewrite code through its syntax tree.

Renames every local name and argument (a text replace would also hit strings and
attributes), drops the comments and writes new ones, moves blank lines, swaps the first
two adjacent function definitions of a body (independent: definitions do not run) and
splits the longest function into a wrapper and a module-level helper.
"""

import ast

KEEP = {"self", "cls"}


class RenameLocals(ast.NodeTransformer):
    """Give each function's arguments and assigned names new names, consistently."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def new_name(self, name: str) -> str:
        return self.names.setdefault(name, f"q{len(self.names)}_{name[::-1].strip('_')}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        declared = {n for s in ast.walk(node) if isinstance(s, ast.Global) for n in s.names}
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


def disguise(code: str, split: bool = True) -> str:
    """``code`` as a copier would hand it in: renamed, recommented, reordered, split."""
    tree = RenameLocals().visit(ast.parse(code))
    swap_first_definitions(tree.body)
    if split:
        split_longest(tree)
    return recomment(ast.unparse(ast.fix_missing_locations(tree)))
