"""The integrity scan: does a submitted notebook's own code try to beat the tests?

The scan runs in the trusted grading process and never executes student code: it reads
each submission with nbformat and walks the code with ``ast``. It looks only at cells the
student could have changed (nbgrader solution cells, and cells the student added or edited);
locked cells are restored from the source at autograde and legitimately import torch.

A flag is evidence for an instructor to read, not a verdict. Optionally
(``c.CourseIntegrity.zero_flagged_exercises = True`` in nbgrader_config.py) the tests of a
flagged exercise are set to 0 in the gradebook, with a comment saying why.
"""

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager
from nbgrader.api import Gradebook, MissingEntry
from traitlets import Bool
from traitlets.config import Configurable
from traitlets.config.loader import PyFileConfigLoader

from autograder.course import COURSE_DIR, notebook_path


@dataclass(frozen=True)
class Flag:
    """One suspicious line of one student's notebook."""

    student: str
    assignment: str
    # nbgrader grade_id; "added cell 7 (exercise scalar)" for a cell without one: the 7th
    # cell of the notebook, counted as the student's work on the exercise named.
    cell: str
    line: int  # 1-based line within the cell; 0 when the flag is about the whole cell
    rule: str  # one of RULES
    detail: str  # what was found, in words an instructor can act on


RULES: dict[str, str] = {
    "autograd-import": "imports or uses an autograd library (torch, jax...) in the student's code",
    "monkeypatch": "changes imported modules, builtins or the names the tests rely on",
    "dynamic-code": "runs code the scan cannot read: exec, eval, compile, dynamic imports, shell",
    "file-access": "reads files outside the notebook's folder, or paths that cannot be verified",
    "locked-cell-edited": "a locked cell was edited or deleted (autograde restores it; info only)",
    "syntax-error": "a cell does not parse, so it was not scanned (a typo, not cheating; info)",
    "unreadable": "the notebook file could not be read as a notebook",
}

CHEATING_RULES = frozenset({"autograd-import", "monkeypatch", "dynamic-code", "file-access"})

# Top-level packages that compute gradients for you, and the course's own reference engine.
AUTOGRAD_LIBRARIES = frozenset(
    """
    torch functorch jax jaxlib flax autograd tensorflow keras tf_keras mlx tinygrad
    micrograd mygrad paddle mxnet theano pytensor aesara chainer tangent autograder.engine
    """.split()
)

DYNAMIC_BUILTINS = frozenset({"exec", "eval", "compile", "__import__", "breakpoint"})
# Qualified-name prefixes of functions that run other programs or code from elsewhere.
EXTERNAL_CODE_PREFIXES = (
    "importlib.",
    "imp.",
    "runpy.",
    "subprocess.",
    "pty.spawn",
    "code.",
    "os.system",
    "os.popen",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "ctypes.",
    "builtins.exec",
    "builtins.eval",
    "builtins.compile",
    "builtins.__import__",
)
# Attributes that reach other functions' globals or frames, a way around the import rule.
INTROSPECTION_ATTRIBUTES = frozenset(
    {"__globals__", "__subclasses__", "__code__", "__closure__", "f_globals", "f_locals", "f_back"}
)

# Functions whose first argument (or the keyword named) is a path they read or list.
FILE_FUNCTIONS: dict[str, str] = {
    "open": "file",
    "builtins.open": "file",
    "io.open": "file",
    "codecs.open": "filename",
    "os.open": "path",
    "os.listdir": "path",
    "os.scandir": "path",
    "os.walk": "top",
    "os.chdir": "path",
    "glob.glob": "pathname",
    "glob.iglob": "pathname",
    "shutil.copy": "src",
    "shutil.copy2": "src",
    "shutil.copyfile": "src",
    "shutil.copytree": "src",
    "numpy.load": "file",
    "numpy.loadtxt": "fname",
    "numpy.genfromtxt": "fname",
    "numpy.fromfile": "file",
    "numpy.memmap": "filename",
    "sqlite3.connect": "database",
    "nbformat.read": "fp",
    "linecache.getline": "filename",
    "linecache.getlines": "filename",
    "fileinput.input": "files",
    "tokenize.open": "filename",
    "matplotlib.pyplot.imread": "fname",
}
PATH_CONSTRUCTORS = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "os.path.join", "Path"}
)
# Methods of a Path that read or list it; the first four are distinctive enough to flag on
# any object, the last three only on a Path built from a literal.
PATH_READ_METHODS = ("read_text", "read_bytes", "iterdir", "rglob", "open", "glob", "walk")
SENSITIVE_PATH_WORDS = (".ipynb", "gradebook", "solutions", "source/", "autograded", "submitted/")

# IPython magics, by what they do.
CODE_MAGICS = frozenset({"time", "timeit", "prun", "capture", "debug"})  # their text is Python
RUNNING_MAGICS = frozenset(
    """
    run load loadpy rerun recall macro edit load_ext reload_ext writefile file system sx
    bash sh script perl ruby python python2 python3 pypy alias
    """.split()
)
PATH_MAGICS = frozenset({"pycat", "cd", "pushd", "bookmark"})  # harmless unless the path leaves


class CourseIntegrity(Configurable):
    """The integrity scan's settings, read from nbgrader_config.py."""

    zero_flagged_exercises = Bool(
        False,
        help="Set the tests of an exercise to 0 when the integrity scan flags its code.",
    ).tag(config=True)


def zero_flagged_setting(config_path: Path) -> bool:
    """``c.CourseIntegrity.zero_flagged_exercises`` from an nbgrader config file (default False)."""
    config = PyFileConfigLoader(config_path.name, path=str(config_path.parent)).load_config()
    return CourseIntegrity(config=config).zero_flagged_exercises


# ---------------------------------------------------------------------------------------------
# Reading code: paths, names, literals


@dataclass(frozen=True)
class Finding:
    """A flag before it knows whose notebook and which cell it is in."""

    line: int
    rule: str
    detail: str


def path_problem(path: str) -> str | None:
    """Why a literal path points outside the notebook's folder, or None when it does not."""
    if path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", path):
        return "an absolute path"
    if ".." in re.split(r"[\\/]", path):
        return "a path that goes up out of the notebook's folder"
    lowered = path.lower()
    for word in SENSITIVE_PATH_WORDS:
        if word in lowered:
            return f"a path mentioning {word!r}"
    return None


def shell_text_problem(text: str) -> str | None:
    """The first problem of any path-like word of a shell command or magic argument."""
    for word in text.split():
        path = word.strip("'\"`;|&<>()")
        if not any(ch.isalnum() for ch in path) and ".." not in path:
            continue  # an operator such as / or |, not a path
        problem = path_problem(path)
        if problem:
            return f"{problem} ({word})"
    return None


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def target_root(node: ast.expr) -> ast.expr:
    """The expression under a chain of attributes and subscripts (``np`` in ``np.a[0].b``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def string_constant(node: ast.expr | None) -> str | None:
    """The value of a string literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def is_call_to(node: ast.expr, *names: str) -> bool:
    """Whether ``node`` is a call of a bare name in ``names`` (``globals()``...)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def import_bindings(tree: ast.AST) -> dict[str, str]:
    """Name -> qualified module or object, for every import in ``tree``."""
    bindings: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings[alias.asname] = alias.name
                else:  # `import a.b` binds a
                    top = alias.name.split(".")[0]
                    bindings[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bindings


def top_level_definitions(tree: ast.Module) -> set[str]:
    """Functions and classes defined at the top of a cell."""
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return {node.name for node in tree.body if isinstance(node, kinds)}


def is_autograd_module(qualified: str) -> bool:
    """Whether a qualified name lies inside an autograd library (or the reference engine)."""
    return any(
        qualified == library or qualified.startswith(library + ".")
        for library in AUTOGRAD_LIBRARIES
    )


def parse_cell(source: str) -> ast.Module:
    """A cell's code as a tree, with IPython syntax (``%magic``, ``!cmd``) made Python first."""
    return ast.parse(TransformerManager().transform_cell(source))


def parse_quietly(source: str) -> ast.Module | None:
    """``parse_cell``, or None for code that does not parse."""
    try:
        return parse_cell(source)
    except (SyntaxError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# Scanning one cell's code


@dataclass(frozen=True)
class NotebookNames:
    """What the whole notebook binds, which a cell's code is judged against."""

    imports: dict[str, str]  # every import of the notebook: alias -> qualified name
    locked_imports: dict[str, str]  # imports of locked cells: the names tests rely on
    locked_definitions: frozenset[str]  # functions and classes the locked cells define

    @property
    def protected(self) -> frozenset[str]:
        """Names a student must not replace through ``globals()``."""
        return frozenset(self.locked_imports) | self.locked_definitions


@dataclass
class Scope:
    """The names a function (or class, lambda, comprehension) binds locally."""

    local: set[str]
    declared_global: set[str]


def scope_of(node: ast.AST) -> Scope:
    """Local and ``global``-declared names of a function-like node (nested ones included)."""
    local: set[str] = set()
    declared: set[str] = set()
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            local.add(arg.arg)
        for arg in (arguments.vararg, arguments.kwarg):
            if arg:
                local.add(arg.arg)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        body: list[ast.AST] = [generator.target for generator in node.generators]
    else:
        body = node.body if isinstance(node.body, list) else [node.body]  # type: ignore[attr-defined]
    for statement in body:
        for child in ast.walk(statement):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                local.add(child.id)
            elif isinstance(child, ast.Global | ast.Nonlocal):
                declared.update(child.names)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                local.add(child.name)
            elif isinstance(child, ast.alias):
                local.add((child.asname or child.name).split(".")[0])
    return Scope(local - declared, declared)


class CellScanner(ast.NodeVisitor):
    """Walks one cell's tree and collects findings of the four cheating rules."""

    def __init__(
        self, names: NotebookNames, line_offset: int = 0, solution_cell: bool = True
    ) -> None:
        self.names = names
        # Using torch that a locked cell imported is the cheat in a solution cell; in a cell
        # the student added it is how they explore what torch does, so only imports count.
        self.solution_cell = solution_cell
        self.line_offset = line_offset
        self.scopes: list[Scope] = []
        self.findings: list[Finding] = []

    # -- bookkeeping

    def report(self, node: ast.AST, rule: str, detail: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 1) + self.line_offset, rule, detail))

    def is_local(self, name: str) -> bool:
        """Whether ``name`` here means a local variable, not the notebook's global."""
        for scope in reversed(self.scopes):
            if name in scope.declared_global:
                return False
            if name in scope.local:
                return True
        return False

    def binds_global(self, name: str) -> bool:
        """Whether storing to ``name`` here rebinds the notebook's global of that name."""
        return not self.scopes or name in self.scopes[-1].declared_global

    def imported(self, name: str) -> str | None:
        """The qualified name an imported global refers to, or None."""
        return None if self.is_local(name) else self.names.imports.get(name)

    def qualified(self, node: ast.expr) -> str | None:
        """``numpy.testing.x`` for ``np.testing.x``, a bare global (``open``) as is, else None.

        A chain on a variable (``code.run()`` with ``code`` a variable) is None, so it is never
        taken for a module function of the same name.
        """
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if self.is_local(head):
            return None
        origin = self.names.imports.get(head)
        if origin is None:
            return None if rest else head
        return f"{origin}.{rest}" if rest else origin

    def in_scope(self, node: ast.AST) -> None:
        self.scopes.append(scope_of(node))
        self.generic_visit(node)
        self.scopes.pop()

    visit_Lambda = in_scope
    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = in_scope

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.check_rebinding(node, node.name, "redefines")
        for expression in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if expression is not None:
                self.visit(expression)
        self.scopes.append(scope_of(node))
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.check_rebinding(node, node.name, "redefines")
        for expression in [*node.bases, *node.decorator_list]:
            self.visit(expression)
        self.scopes.append(scope_of(ast.Module(body=node.body, type_ignores=[])))
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()

    # -- rule autograd-import, and importlib for dynamic-code

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.check_imported_module(node, alias.name)
            self.check_import_binding(node, alias.name, alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:  # a relative import has no package to come from in a notebook
            return
        module = node.module or ""
        self.check_imported_module(node, module)
        for alias in node.names:
            qualified = f"{module}.{alias.name}"
            if is_autograd_module(qualified) and not is_autograd_module(module):
                self.report(node, "autograd-import", f"imports {qualified} (an autograd library)")
            if alias.name != "*":
                self.check_import_binding(node, qualified, alias.asname or alias.name)

    def check_imported_module(self, node: ast.stmt, module: str) -> None:
        if is_autograd_module(module):
            self.report(node, "autograd-import", f"imports {module} (an autograd library)")
        if module.split(".")[0] in ("importlib", "imp"):
            self.report(node, "dynamic-code", f"imports {module} (imports chosen at run time)")

    def check_import_binding(self, node: ast.stmt, qualified: str, bound: str) -> None:
        original = self.names.locked_imports.get(bound)
        # Importing the very same thing again (a student repeating the setup) is fine.
        if original is not None and original != qualified and self.binds_global(bound):
            if not (isinstance(node, ast.Import) and original == bound):
                self.report(node, "monkeypatch", self.rebinding_detail(bound, "rebinds"))

    def visit_Name(self, node: ast.Name) -> None:
        origin = self.imported(node.id)
        library = origin and is_autograd_module(origin)
        if isinstance(node.ctx, ast.Load) and library and self.solution_cell:
            shown = node.id if node.id == origin else f"{node.id} ({origin})"
            self.report(
                node,
                "autograd-import",
                f"uses {shown} in a solution cell; exercises must not use an autograd library",
            )
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.check_rebinding(node, node.id, "rebinds")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in INTROSPECTION_ATTRIBUTES:
            self.report(
                node, "dynamic-code", f"reads .{node.attr}, which reaches other code's internals"
            )
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.check_patch_target(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = string_constant(node.slice)
        container = self.qualified(node.value)
        from_modules = container == "sys.modules" or is_call_to(node.value, "globals", "vars")
        if isinstance(node.ctx, ast.Load) and from_modules and key and is_autograd_module(key):
            self.report(node, "autograd-import", f"looks up {key!r} at run time")
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.check_patch_target(node)
        self.generic_visit(node)

    # -- rule monkeypatch

    def rebinding_detail(self, name: str, verb: str) -> str:
        origin = self.names.locked_imports[name]
        return f"{verb} {name}, which a locked cell imported from {origin.rsplit('.', 1)[0]}"

    def check_rebinding(self, node: ast.AST, name: str, verb: str) -> None:
        if name in self.names.locked_imports and self.binds_global(name):
            self.report(node, "monkeypatch", self.rebinding_detail(name, verb))

    def check_patch_target(self, target: ast.Attribute | ast.Subscript) -> None:
        """Flag assigning to or deleting an attribute or item of shared state."""
        verb = "deletes" if isinstance(target.ctx, ast.Del) else "assigns"
        shown = ast.unparse(target)
        root = target_root(target)
        owner = self.patched_owner(root, target)
        if owner:
            self.report(target, "monkeypatch", f"{verb} {shown} ({owner})")

    def patched_owner(self, root: ast.expr, target: ast.expr) -> str | None:
        """What a target under ``root`` would change, when that is shared state; else None."""
        if isinstance(root, ast.Name):
            if root.id == "__builtins__" and not self.is_local(root.id):
                return "changing Python's built-in functions"
            origin = self.imported(root.id)
            if origin and isinstance(target, ast.Attribute):
                origin = self.qualified(target.value) or origin  # the module changed
            return f"monkeypatching {origin}" if origin else None
        if is_call_to(root, "get_ipython"):
            return "changing the IPython shell that runs the tests"
        if not isinstance(root, ast.Call):
            return None
        if is_call_to(root, "vars") and root.args:  # vars(np)[...]: np's own namespace
            return self.patched_owner(target_root(root.args[0]), root.args[0])
        if is_call_to(root, "globals") or (is_call_to(root, "vars", "locals") and not self.scopes):
            return self.globals_owner(target, root)
        return None

    def globals_owner(self, target: ast.expr, root: ast.expr) -> str | None:
        """The effect of ``globals()[key] = ...`` (or on an attribute of it), judged by key."""
        node = target
        while isinstance(node, ast.Attribute | ast.Subscript) and node.value is not root:
            node = node.value
        if not isinstance(node, ast.Subscript):
            return None
        key = string_constant(node.slice)
        if key is None:
            return "changing a global name the scan cannot verify"
        if node is target and key in self.names.protected:
            return f"replacing {key}, which a locked cell defines"
        if node is not target and key in self.names.imports:
            return f"monkeypatching {self.names.imports[key]}"
        return None

    # -- calls: dynamic-code, setattr, file-access, shell escapes

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualified(node.func)
        if name:
            self.check_dynamic_call(node, name)
            self.check_setattr(node, name)
            self.check_file_call(node, name)
        if isinstance(node.func, ast.Attribute):
            self.check_method_call(node, node.func)
        self.generic_visit(node)

    def check_dynamic_call(self, node: ast.Call, name: str) -> None:
        first = string_constant(node.args[0]) if node.args else None
        if name in DYNAMIC_BUILTINS or name.startswith(EXTERNAL_CODE_PREFIXES):
            self.report(node, "dynamic-code", f"calls {name}() (runs code the scan cannot read)")
            if first and is_autograd_module(first) and ("import" in name):
                self.report(node, "autograd-import", f"imports {first} through {name}()")

    def check_setattr(self, node: ast.Call, name: str) -> None:
        if name not in ("setattr", "delattr", "builtins.setattr", "builtins.delattr"):
            return
        if not node.args:
            return
        owner = self.patched_owner(target_root(node.args[0]), node.args[0])
        if owner:
            shown = ast.unparse(node.args[0])
            self.report(node, "monkeypatch", f"calls {name}() on {shown} ({owner})")

    def check_file_call(self, node: ast.Call, name: str) -> None:
        keyword = FILE_FUNCTIONS.get(name)
        if keyword is None:
            return
        argument = node.args[0] if node.args else None
        for item in node.keywords:
            if item.arg == keyword:
                argument = item.value
        if argument is not None:
            self.check_path_argument(node, argument, f"{name}()")

    def check_path_argument(self, node: ast.AST, argument: ast.expr, action: str) -> None:
        path = self.literal_path(argument)
        if path is None:
            words = self.literal_parts(argument)
            problem = next(filter(None, map(path_problem, words)), None)
            if problem:
                self.report(node, "file-access", f"{action} reads {problem}")
            else:
                self.report(
                    node,
                    "file-access",
                    f"{action} reads a path computed at run time ({ast.unparse(argument)}): "
                    "cannot be verified",
                )
            return
        problem = path_problem(path)
        if problem:
            self.report(node, "file-access", f"{action} reads {problem} ({path})")

    def literal_path(self, node: ast.expr) -> str | None:
        """The path a literal expression spells (strings, ``Path(...)``, ``/``), else None."""
        text = string_constant(node)
        if text is not None:
            return text
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.literal_path(node.left), self.literal_path(node.right)
            return f"{left}/{right}" if left is not None and right is not None else None
        if isinstance(node, ast.Call) and self.qualified(node.func) in PATH_CONSTRUCTORS:
            parts = [self.literal_path(arg) for arg in node.args]
            if None in parts or node.keywords:
                return None
            return "/".join(part for part in parts if part is not None) or "."
        return None

    def literal_parts(self, node: ast.expr) -> list[str]:
        """Every string literal inside an expression (the fixed parts of an f-string...)."""
        return [text for child in ast.walk(node) if (text := string_constant(child)) is not None]

    def check_method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        receiver = func.value
        if is_call_to(receiver, "get_ipython"):
            self.check_shell_call(node, func.attr)
            return
        if self.qualified(receiver) == "sys.modules":
            if func.attr in ("update", "pop", "setdefault", "__setitem__", "clear", "popitem"):
                self.report(node, "monkeypatch", f"calls sys.modules.{func.attr}()")
        if is_call_to(receiver, "globals") and func.attr in ("update", "__setitem__", "setdefault"):
            self.report(
                node, "monkeypatch", f"calls globals().{func.attr}(), which can replace any name"
            )
        if func.attr not in PATH_READ_METHODS:
            return
        literal = self.literal_path(receiver)
        action = f"Path.{func.attr}()"
        if literal is not None and isinstance(receiver, ast.Call):
            problem = path_problem(literal)
            if problem:
                self.report(node, "file-access", f"{action} reads {problem} ({literal})")
        elif func.attr in PATH_READ_METHODS[:4]:
            self.check_path_argument(node, receiver, action)

    def check_shell_call(self, node: ast.Call, method: str) -> None:
        """``get_ipython().X(...)``: what ``!cmd`` and ``%magic`` became, or direct use."""
        first = string_constant(node.args[0]) if node.args else None
        texts = [text for arg in node.args[1:] if (text := string_constant(arg)) is not None]
        if method in ("system", "getoutput"):
            command = first or "?"
            self.report(node, "dynamic-code", f"runs the shell command !{command} (shell escape)")
            problem = shell_text_problem(command)
            if problem:
                self.report(node, "file-access", f"the shell command !{command} uses {problem}")
            return
        if method not in ("run_line_magic", "run_cell_magic") or first is None:
            self.report(
                node, "monkeypatch", f"calls get_ipython().{method}(), reaching into the shell"
            )
            return
        self.check_magic(node, first, texts, cell_magic=method == "run_cell_magic")

    def check_magic(self, node: ast.Call, magic: str, texts: list[str], cell_magic: bool) -> None:
        shown = ("%%" if cell_magic else "%") + magic
        if magic in CODE_MAGICS:
            # The magic's text is Python that runs: scan it as part of this cell.
            code = texts[-1] if texts else ""
            offset = node.lineno + self.line_offset - (0 if cell_magic else 1)
            self.findings.extend(scan_magic_code(code, self.names, offset, self.solution_cell))
            return
        if magic in RUNNING_MAGICS:
            self.report(node, "dynamic-code", f"{shown} runs or writes code the scan cannot read")
        problem = next(filter(None, map(shell_text_problem, texts)), None)
        if problem and (magic in RUNNING_MAGICS or magic in PATH_MAGICS):
            self.report(node, "file-access", f"{shown} uses {problem}")


def scan_magic_code(
    code: str, names: NotebookNames, line_offset: int, solution_cell: bool
) -> list[Finding]:
    """Findings in the Python text of ``%timeit``-like magics (options before it skipped)."""
    words = code.split(" ")
    for start in range(len(words)):
        tree = parse_quietly(" ".join(words[start:]))
        if tree is not None:
            scanner = CellScanner(names, line_offset, solution_cell)
            scanner.visit(tree)
            return scanner.findings
    return []


def scan_code(source: str, names: NotebookNames, solution_cell: bool = True) -> list[Finding]:
    """The cheating-rule findings of one cell, or one syntax-error finding."""
    try:
        tree = parse_cell(source)
    except SyntaxError as error:
        return [Finding(error.lineno or 1, "syntax-error", f"does not parse: {error.msg}")]
    except ValueError as error:  # e.g. a null byte in the source
        return [Finding(1, "syntax-error", f"does not parse: {error}")]
    scanner = CellScanner(names, solution_cell=solution_cell)
    scanner.visit(tree)
    return unique(scanner.findings)


def unique(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in order of line, each once."""
    return sorted(set(findings), key=lambda f: (f.line, f.rule, f.detail))


# ---------------------------------------------------------------------------------------------
# Which cells are the student's, and what they changed


def nbgrader_metadata(cell: nbformat.NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell: nbformat.NotebookNode) -> str | None:
    return nbgrader_metadata(cell).get("grade_id")


def is_locked(cell: nbformat.NotebookNode) -> bool:
    return bool(nbgrader_metadata(cell).get("locked"))


def is_solution(cell: nbformat.NotebookNode) -> bool:
    return bool(nbgrader_metadata(cell).get("solution"))


def code_cells(notebook: nbformat.NotebookNode) -> Iterator[tuple[int, nbformat.NotebookNode]]:
    """(1-based position in the notebook, cell) of every code cell."""
    for position, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type == "code":
            yield position, cell


def notebook_names(
    notebook: nbformat.NotebookNode, locked_from: nbformat.NotebookNode
) -> NotebookNames:
    """Imports of the whole notebook, and what the locked cells of ``locked_from`` bind."""
    imports: dict[str, str] = {}
    locked_imports: dict[str, str] = {}
    definitions: set[str] = set()
    for _, cell in code_cells(locked_from):
        tree = parse_quietly(cell.source) if is_locked(cell) else None
        if tree is not None:
            locked_imports.update(import_bindings(tree))
            definitions |= top_level_definitions(tree)
    for _, cell in code_cells(notebook):
        tree = parse_quietly(cell.source)
        if tree is not None:
            imports.update(import_bindings(tree))
    return NotebookNames({**imports, **locked_imports}, locked_imports, frozenset(definitions))


def without_hidden_tests(source: str) -> str:
    """A locked cell's source as released: hidden tests cut, blank edges trimmed."""
    source = re.sub(
        r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", "", source, flags=re.DOTALL
    )
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def first_difference(mine: str, theirs: str) -> int:
    """1-based line of ``mine`` where it first differs from ``theirs``."""
    for number, (a, b) in enumerate(
        zip(mine.splitlines(), theirs.splitlines(), strict=False), start=1
    ):
        if a.rstrip() != b.rstrip():
            return number
    return min(len(mine.splitlines()), len(theirs.splitlines())) + 1


def locked_cell_findings(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode
) -> list[tuple[str, Finding]]:
    """(grade_id, finding) for each locked release cell edited or missing in the submission."""
    submitted = {grade_id(cell): cell for _, cell in code_cells(notebook) if grade_id(cell)}
    findings = []
    for _, given in code_cells(release):
        name = grade_id(given)
        if not name or not is_locked(given):
            continue
        cell = submitted.get(name)
        if cell is None:
            findings.append((name, Finding(0, "locked-cell-edited", "locked cell deleted")))
            continue
        mine, theirs = without_hidden_tests(cell.source), without_hidden_tests(given.source)
        if mine != theirs:
            line = first_difference(mine, theirs)
            detail = f"locked cell edited (first change at line {line}); autograde restores it"
            findings.append((name, Finding(line, "locked-cell-edited", detail)))
    return findings


@dataclass(frozen=True)
class StudentCell:
    """A code cell the student could have written or changed, and what they were given."""

    label: str  # grade_id or "added cell N (exercise X)"
    source: str
    given: str | None  # the release's version of this cell, when there is one
    solution: bool  # an nbgrader solution cell, not one the student added


def added_cell_label(position: int, exercise: str | None) -> str:
    return f"added cell {position}" + (f" (exercise {exercise})" if exercise else "")


def exercise_of_added(label: str) -> str | None:
    """The exercise an added cell counts towards, from its label."""
    match = re.search(r"\(exercise (\S+)\)$", label)
    return match.group(1) if match else None


def student_cells(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode | None
) -> list[StudentCell]:
    """The cells to scan: solution cells, and cells without metadata unless given unchanged.

    A cell without nbgrader metadata counts towards the exercise whose solution cell
    precedes it (or the first exercise, for one above them all), as it runs before that
    exercise's tests.
    """
    given_cells = [cell for _, cell in code_cells(release)] if release else []
    by_grade_id = {grade_id(cell): cell for cell in given_cells if grade_id(cell)}
    by_id = {cell.get("id"): cell for cell in given_cells if cell.get("id")}
    given_sources = {cell.source for cell in given_cells if not grade_id(cell)}
    solutions = [grade_id(cell) for _, cell in code_cells(notebook) if is_solution(cell)]
    exercise = solutions[0] if solutions else None
    cells = []
    for position, cell in code_cells(notebook):
        name = grade_id(cell)
        given = by_grade_id.get(name) if name else None
        if release is not None and given is not None:
            if not is_locked(given):
                cells.append(StudentCell(name, cell.source, given.source, True))
        elif release is None and name:
            if not is_locked(cell):
                cells.append(StudentCell(name, cell.source, None, True))
        else:  # no metadata, or a grade_id the release does not know
            original = by_id.get(cell.get("id"))
            if cell.source in given_sources and (
                original is None or original.source == cell.source
            ):
                continue  # a demonstration cell of the course, as given
            earlier = original.source if original is not None and not grade_id(original) else None
            label = added_cell_label(position, exercise)
            cells.append(StudentCell(label, cell.source, earlier, False))
        if is_solution(cell) and name:
            exercise = name
    return cells


def cell_findings(cell: StudentCell, names: NotebookNames) -> list[Finding]:
    """Findings of a student cell, less those its given version already had."""
    findings = scan_code(cell.source, names, cell.solution)
    if cell.given is None:
        return findings
    already = {(f.rule, f.detail) for f in scan_code(cell.given, names, cell.solution)}
    return [f for f in findings if (f.rule, f.detail) not in already]


def default_release(assignment: str) -> Path | None:
    """The course's release of ``assignment`` (course/NN/NN.ipynb), when there is one."""
    path = notebook_path(COURSE_DIR, assignment)
    return path if path.is_file() else None


def read_notebook(path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.read(path, as_version=4)
    if not isinstance(notebook.get("cells"), list):
        raise ValueError("no list of cells")
    return notebook


# ---------------------------------------------------------------------------------------------
# Public interface


def scan_notebook(
    path: Path, student: str, assignment: str, release_notebook: Path | None = None
) -> list[Flag]:
    """Flags of one submitted notebook; never raises for a broken notebook.

    ``release_notebook`` is what the student was given (course/NN/NN.ipynb): cells of it that
    come back unchanged are not the student's code, and its locked cells are compared with
    the submission's. Without it, the course's own release of ``assignment`` is used.
    """
    release_path = release_notebook or default_release(assignment)
    try:
        notebook = read_notebook(path)
    except Exception as error:  # a broken file must not stop the scan of a whole cohort
        return [Flag(student, assignment, "", 0, "unreadable", f"{path.name}: {error}")]
    release = read_notebook(release_path) if release_path else None
    names = notebook_names(notebook, release or notebook)
    flags = [
        Flag(student, assignment, cell.label, finding.line, finding.rule, finding.detail)
        for cell in student_cells(notebook, release)
        for finding in cell_findings(cell, names)
    ]
    if release is not None:
        flags += [
            Flag(student, assignment, name, finding.line, finding.rule, finding.detail)
            for name, finding in locked_cell_findings(notebook, release)
        ]
    return flags


def scan_submissions(root: Path, assignment: str, release_dir: Path | None = None) -> list[Flag]:
    """Flags of every ``root/submitted/<student>/<assignment>/*.ipynb``, students sorted.

    ``release_dir`` holds the release as ``release_dir/<assignment>/<assignment>.ipynb``
    (course/ or a workspace's release/); without it, course/ is used.
    """
    release = notebook_path(release_dir, assignment) if release_dir else None
    flags: list[Flag] = []
    submitted = root / "submitted"
    students = sorted(p for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    for student in students:
        for notebook in sorted((student / assignment).glob("*.ipynb")):
            flags += scan_notebook(notebook, student.name, assignment, release)
    return flags


def write_flags(flags: list[Flag], path: Path) -> None:
    """Save flags as a JSON list of objects, for the report and for later zeroing."""
    path.write_text(json.dumps([asdict(flag) for flag in flags], indent=1) + "\n")


def read_flags(path: Path) -> list[Flag]:
    """Flags saved by ``write_flags``."""
    return [Flag(**item) for item in json.loads(path.read_text())]


def exercises(source_notebook: Path) -> dict[str, list[str]]:
    """Solution grade_id -> its test cells: graded cells after it, up to the next solution."""
    notebook = read_notebook(source_notebook)
    tests: dict[str, list[str]] = {}
    current: str | None = None
    for cell in notebook.cells:
        metadata = nbgrader_metadata(cell)
        if metadata.get("solution"):
            current = metadata["grade_id"]
            tests[current] = []
        if metadata.get("grade") and current is not None:
            tests[current].append(metadata["grade_id"])
    return tests


def flagged_exercise(flag: Flag, tests: dict[str, list[str]]) -> str | None:
    """The exercise a flag's cell belongs to: its own solution cell, or an added cell's."""
    if flag.cell in tests:
        return flag.cell
    return exercise_of_added(flag.cell)


def zero_flagged_exercises(
    db_url: str,
    flags: list[Flag],
    source_notebook: Path,
    rules: frozenset[str] = CHEATING_RULES,
) -> list[tuple[str, str, str]]:
    """Score 0 for the tests of each flagged exercise, with a comment on its solution cell.

    ``source_notebook`` is the instructor's notebook (source/NN/NN.ipynb): its folder names
    the assignment and its stem the notebook. Only flags of ``rules`` on this assignment
    count; a student without an autograded submission is skipped. Returns the
    (student, assignment, test grade_id) triples set to 0.
    """
    assignment, notebook_id = source_notebook.parent.name, source_notebook.stem
    tests = exercises(source_notebook)
    reasons: dict[tuple[str, str], list[Flag]] = {}
    for flag in flags:
        exercise = flagged_exercise(flag, tests)
        if flag.rule in rules and flag.assignment == assignment and exercise:
            reasons.setdefault((flag.student, exercise), []).append(flag)
    zeroed: list[tuple[str, str, str]] = []
    with Gradebook(db_url) as gradebook:
        for (student, exercise), found in sorted(reasons.items()):
            try:
                grades = [
                    gradebook.find_grade(test, notebook_id, assignment, student)
                    for test in tests[exercise]
                ]
                comment = gradebook.find_comment(exercise, notebook_id, assignment, student)
            except MissingEntry:
                continue
            for grade in grades:
                grade.manual_score = 0.0
                grade.extra_credit = None
                grade.needs_manual_grade = False
                zeroed.append((student, assignment, grade.name))
            comment.manual_comment = zero_comment(found)
        gradebook.db.commit()
    return zeroed


def zero_comment(flags: list[Flag]) -> str:
    """The comment a student and grader see on an exercise whose tests were set to 0."""
    lines = [f"- {flag.cell}, line {flag.line}: {flag.detail} [{flag.rule}]" for flag in flags]
    return "Tests of this exercise set to 0 by the integrity scan:\n" + "\n".join(lines)
