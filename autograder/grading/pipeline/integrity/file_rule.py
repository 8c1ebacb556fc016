"""Rule file-access: reading files outside the notebook's folder, or paths it cannot verify.

A submission that reads the gradebook, the solutions or other students' notebooks could copy
answers; a path computed at run time could be any of those.
"""

import ast
import re

from autograder.grading.pipeline.integrity.scanner import ScannerBase
from autograder.grading.pipeline.integrity.syntax import string_constant

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


def literal_parts(node: ast.expr) -> list[str]:
    """Every string literal inside an expression (the fixed parts of an f-string...)."""
    return [text for child in ast.walk(node) if (text := string_constant(child)) is not None]


class FileAccessRule(ScannerBase):
    """Checks for the file-access rule."""

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

    def check_path_method(self, node: ast.Call, func: ast.Attribute) -> None:
        """``Path("/etc").read_text()`` and the like."""
        if func.attr not in PATH_READ_METHODS:
            return
        receiver = func.value
        built = self.literal_path(receiver) if isinstance(receiver, ast.Call) else None
        if built is not None or func.attr in PATH_READ_METHODS[:4]:
            self.check_path_argument(node, receiver, f"Path.{func.attr}()")

    def check_path_argument(self, node: ast.AST, argument: ast.expr, action: str) -> None:
        path = self.literal_path(argument)
        if path is not None:
            problem = path_problem(path)
            if problem:
                self.report(node, "file-access", f"{action} reads {problem} ({path})")
            return
        problem = next(filter(None, map(path_problem, literal_parts(argument))), None)
        if problem:
            self.report(node, "file-access", f"{action} reads {problem}")
        else:
            self.report(
                node,
                "file-access",
                f"{action} reads a path computed at run time ({ast.unparse(argument)}): "
                "cannot be verified",
            )

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
