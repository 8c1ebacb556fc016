"""The grading kernel's runtime record: an audit hook (``sys.addaudithook``) installed before
ipykernel starts, writing what the notebook's cells did to an append-only file in the job
folder, one JSON object a line.

The kernel's launcher (``launch_kernel``) loads this file by its path (``install`` before
``ipykernel``), not as a package module, so the kernel imports nothing of the grader:
stdlib only here. The grader reads the record back (``runtime_record``) and turns it into
flags.

Each event names the cell whose code caused it: the innermost frame whose code was
compiled from a notebook cell (IPython compiles each cell under a file name of its own,
seen here in the ``compile`` event while that cell's execution count is current). So a
function a solution cell defined and a test cell later called is charged to the solution
cell, and the check library's own imports and opens (called from a test cell) are charged
to the test cell, which the grader then ignores as the instructor's code.

A second line, not a wall: the hook cannot be removed and refuses every reopening or
truncation of the record, but the student's code shares the process and could still write
forged lines to the record's file descriptor, close it (the record then stops early: the
grader sees cells missing from it and flags that), or corrupt the hook's state through
ctypes (recorded as a ctypes event first). The sandbox and the trusted verdicts are the
walls; this record is evidence.
"""

import json
import os
import sys
import threading

DETAILS_PER_KEY = 5  # events written in full per (cell, kind); the rest are only counted

PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.kill",
        "os.killpg",
        "pty.spawn",
    }
)
HOOK_EVENTS = frozenset(
    {"sys.settrace", "sys.setprofile", "sys.addaudithook", "sys._getframe", "sys._current_frames"}
)
SEARCH_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
NETWORK_EVENTS = frozenset({"socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo"})
# Function attributes that change what an already defined function does.
FUNCTION_PARTS = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__globals__"})
# Code made from data at run time without exec or compile: a code object from bytes
# (marshal), built or changed field by field, a function made from a code object.
CODE_FROM_DATA = frozenset({"marshal.loads", "marshal.load", "code.__new__", "function.__new__"})
# Modules whose own code generates code with exec (dataclass __init__, namedtuple...).
CODE_GENERATORS = ("dataclasses", "collections", "typing", "enum", "functools", "string")
CELL_PREFIXES = ("<ipython-input-",)
FILE_EVENTS = frozenset({"open", "sqlite3.connect"})
# The events the hook looks at; every other one returns at once (a kernel raises tens of
# thousands, object.__getattr__ and builtins.id above all, and this hook is Python).
WATCHED_EVENTS = (
    frozenset({"import", "exec", "compile", "os.truncate", "object.__setattr__"})
    | {"object.__getattr__"}  # only for FUNCTION_PARTS: the hook's closure filters the rest
    | CODE_FROM_DATA
    | FILE_EVENTS
    | PROCESS_EVENTS
    | HOOK_EVENTS
    | SEARCH_EVENTS
    | NETWORK_EVENTS
)
WATCHED_PREFIXES = ("os.exec", "os.spawn", "ctypes.", "os.posix_spawn")
# Frequent events that ``classify`` mostly dismisses from the caller alone (an import, a
# library's own code): classified before the walk up to the cell's frame, not after it.
CLASSIFIED_FIRST = frozenset(
    {"import", "exec", "compile", "sys._getframe", "object.__setattr__", "object.__getattr__"}
    | CODE_FROM_DATA
)


# The request the grader sends the student's kernel before each test cell (its verdicts
# executor builds it from this), and the cell its work is charged to: none of the student's.
SERVE_REQUEST = "__import__('autograder.kernel.serve', fromlist=['_']).serve({path!r})"
GRADER_CELL = 0


def _is_serve_request(source) -> bool:
    """Whether ``source`` is exactly the grader's serve request, for some socket path."""
    if isinstance(source, bytes):  # how the compile event passes IPython's cells
        source = source.decode("utf-8", "replace")
    if not isinstance(source, str):
        return False
    source = source.removesuffix("\n")  # IPython ends every cell it compiles with one
    head, _, tail = SERVE_REQUEST.partition("{path!r}")
    if not (source.startswith(head) and source.endswith(tail)):
        return False
    path = source[len(head) : len(source) - len(tail)]
    # One plain string literal: quotes at both ends and none, nor any escape, inside.
    return len(path) >= 2 and path[0] == path[-1] == "'" and not set("'\\\n") & set(path[1:-1])


def _is_cell_file(name: str) -> bool:
    """A file name IPython or ipykernel gives to a cell's code."""
    return name.startswith(CELL_PREFIXES) or (
        "/ipykernel_" in name and name.endswith(".py") and "site-packages" not in name
    )


class Recorder:
    """The hook's state: cell file names, counts, the record's file descriptor."""

    def __init__(self, fd: int, path: str, folder: str) -> None:
        self.fd = fd
        self.path = os.path.realpath(path)
        self.name = os.path.basename(self.path)
        self.folder = folder  # the notebook's folder: reading inside it is expected
        self.cells: dict[str, int] = {}  # cell file name -> execution count
        self.counts: dict[str, int] = {}  # "cell kind" -> events seen
        self.busy: set[int] = set()  # threads inside the hook (its own calls raise events)
        self.shell_state: tuple | None = None
        self.current = 0  # execution count of the cell running now
        self.stdlib = sys.stdlib_module_names
        self.prefixes = tuple(
            {os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        )

    # -- writing ---------------------------------------------------------------------------

    def write(self, entry: dict) -> None:
        try:
            os.write(self.fd, (json.dumps(entry, default=repr) + "\n").encode())
        except OSError:  # the student closed it: the grader sees the record stop early
            pass

    def event(self, kind: str, detail: str, frame) -> None:
        """Count one event of ``kind`` charged to ``frame``'s cell; write the first few."""
        cell = self.cells.get(frame.f_code.co_filename, 0)
        key = f"{cell} {kind}"
        count = self.counts[key] = self.counts.get(key, 0) + 1
        if count <= DETAILS_PER_KEY:
            self.write({"cell": cell, "line": frame.f_lineno, "kind": kind, "detail": detail[:300]})

    # -- frames ----------------------------------------------------------------------------

    def cell_frame(self, frame):
        """The innermost frame running a notebook cell's code, or None."""
        while frame is not None:
            if frame.f_code.co_filename in self.cells:
                return frame
            frame = frame.f_back
        return None

    # -- the hook --------------------------------------------------------------------------

    def hook(self):
        """The function to install: an event the recorder does not watch returns at its
        first line, a set lookup (a closure, cheaper to call than this instance)."""
        ignored: set[str] = set()
        record = self.__call__

        def audit(event: str, args: tuple) -> None:
            if event in ignored:
                return
            if event not in WATCHED_EVENTS and not event.startswith(WATCHED_PREFIXES):
                ignored.add(event)
                return
            # The most frequent event of all: only reads of a function's parts are looked at.
            if event == "object.__getattr__" and (len(args) < 2 or args[1] not in FUNCTION_PARTS):
                return
            record(event, args)

        return audit

    def __call__(self, event: str, args: tuple) -> None:
        if event == "open" and args and self._is_record(args[0]):
            raise PermissionError("the grading record is not the notebook's to open")
        if event == "os.truncate" and args and (args[0] == self.fd or self._is_record(args[0])):
            raise PermissionError("the grading record is not the notebook's to truncate")
        thread = threading.get_ident()
        if thread in self.busy:
            return
        self.busy.add(thread)
        try:
            self.dispatch(event, args)
        except Exception as error:  # the hook must never break the kernel's own work
            self.write({"cell": self.current, "kind": "hook-error", "detail": repr(error)})
        finally:
            self.busy.discard(thread)

    def _is_record(self, path) -> bool:
        try:
            if not isinstance(path, (str, bytes, os.PathLike)):
                return False
            name = os.fsdecode(path)
            # Only a path ending in the record's name (or in no name), or in a symbolic
            # link, can resolve to the record: realpath, a system call per folder, is
            # spent on those alone (the kernel opens over a thousand files importing torch).
            if os.path.basename(name) not in (self.name, "") and not os.path.islink(name):
                return False
            return os.path.realpath(name) == self.path
        except (TypeError, ValueError):
            return False

    def dispatch(self, event: str, args: tuple) -> None:
        named_compile = event == "compile" and len(args) > 1 and isinstance(args[1], str)
        if named_compile and _is_cell_file(args[1]):
            # The grader's own request to serve the trusted kernel (IPython compiles it
            # as a silent cell, under the next cell's count): its work (importing the
            # channel, connecting, forking a lending copy) is no student cell's. Only when
            # IPython compiles it, not a cell's code: that would map its file name.
            if _is_serve_request(args[0]) and self.cell_frame(sys._getframe(2)) is None:
                self.cells[args[1]] = GRADER_CELL
                # What the last cell did to IPython shows now: no cell of the student's
                # follows when the rest are test cells (they run in the trusted kernel).
                self.note_shell_changes(self.current)
                return
            if args[1] not in self.cells:
                self.new_cell(args[1])
                return
        if not self.cells:
            return  # no cell has run yet: nothing to charge an event to
        # The Python frame that raised the event (0: here, 1: __call__, 2: the hook).
        caller = sys._getframe(3)
        # The cell's own code called the audited function (the caller is the cell's frame).
        direct = caller.f_code.co_filename in self.cells
        if event in CLASSIFIED_FIRST:
            found = self.classify(event, args, caller, direct)
            frame = self.cell_frame(caller) if found is not None else None
        elif event in FILE_EVENTS and "importlib._bootstrap" in caller.f_code.co_filename:
            return  # an import reading a module (as file_event says, without the walk)
        else:
            frame = self.cell_frame(caller)
            found = self.classify(event, args, caller, direct) if frame is not None else None
        if frame is not None and found is not None:
            self.event(found[0], found[1], frame)

    def classify(self, event: str, args: tuple, caller, direct: bool) -> tuple[str, str] | None:
        """(kind, detail) for an event worth recording, None for the kernel's routine work."""
        if event == "import":
            name = str(args[0])
            top = name.partition(".")[0]
            if top in self.stdlib or top in ("numpy", "_distutils_hack"):
                return None
            return "import", name
        if event in ("exec", "compile"):
            module = caller.f_globals.get("__name__", "")
            importing = "importlib._bootstrap" in caller.f_code.co_filename
            if importing or str(module).startswith("importlib"):
                return None  # an import running a module's code
            if not direct and _generates_code(caller):
                return None
            what = args[0]
            if event == "exec":
                code = getattr(what, "co_filename", "?")
                return "code", f"exec of code from {code}"
            text = what.decode(errors="replace") if isinstance(what, bytes) else str(what)
            return "code", f"compile: {text[:120]!r}"
        if event in CODE_FROM_DATA:
            # Imports load every .pyc through marshal: only the cells' own code counts.
            return ("code", f"{event}: code made from data at run time") if direct else None
        if event == "object.__getattr__":
            # A literal ``f.__code__`` is the static scan's; a computed name is seen only here.
            return ("code", f"reads a function's {args[1]}") if direct else None
        if event in ("open", "sqlite3.connect"):
            return self.file_event(event, args, caller)
        if event == "os.truncate":
            return "file", f"truncate {args[0]!r}"
        if event in PROCESS_EVENTS or event.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
            return "process", f"{event} {_short(args)}"
        if event == "sys._getframe" and not direct:
            return None  # libraries (warnings, logging) look at their callers
        if event in HOOK_EVENTS:
            return "hook", event
        if event in SEARCH_EVENTS:
            return "hook", f"{event} (finding objects to change)"
        if event == "object.__setattr__":
            name = args[1] if len(args) > 1 else ""
            if not direct and _generates_code(caller):
                return None  # a dataclass's generated __init__ given its defaults
            if name in FUNCTION_PARTS and callable(args[0]):
                return "hook", f"sets {getattr(args[0], '__qualname__', '?')}.{name}"
            return None
        if event in NETWORK_EVENTS:
            return "network", f"{event} {_short(args)}"
        if event.startswith("ctypes."):
            return "ctypes", f"{event} {_short(args)}"
        return None

    def file_event(self, event: str, args: tuple, caller) -> tuple[str, str] | None:
        """Opens for writing anywhere, and reads outside the notebook's folder and Python."""
        if "importlib._bootstrap" in caller.f_code.co_filename:
            return None
        path = args[0] if args else None
        if isinstance(path, int) or path is None:
            return None  # an already open descriptor
        try:
            name = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return "file", f"{event} {path!r}"
        mode = str(args[1]) if len(args) > 1 and args[1] is not None else "r"
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        writing = (
            event == "sqlite3.connect"
            or any(c in mode for c in "wax+")
            or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC))
        )
        if writing:
            return "file", f"opens {name} to write"
        inside = name == self.folder or name.startswith(self.folder + os.sep)
        if inside or name.startswith(self.prefixes) or name in ("/dev/null", "/dev/urandom"):
            return None
        return "file", f"reads {name}"

    def new_cell(self, filename: str) -> None:
        """A cell is about to run: remember its file, note IPython hooks changed meanwhile."""
        self.current = _cell_number(filename)
        self.cells[filename] = self.current
        self.write({"cell": self.current, "kind": "cell", "counts": self.counts})
        # Charged to the cell that ran before this one: it made the change.
        self.note_shell_changes(self.previous_cell())

    def note_shell_changes(self, cell: int) -> None:
        """Write a hook event charged to ``cell`` when IPython's hooks changed since the
        last look (a cell about to run, or the grader's request, is when to look)."""
        state = _shell_state()
        if self.shell_state is None:
            self.shell_state = state
        elif state != self.shell_state:
            changed = [
                n for n, a, b in zip(STATE_NAMES, self.shell_state, state, strict=False) if a != b
            ]
            self.shell_state = state
            self.write(
                {
                    "cell": cell,
                    "line": 0,
                    "kind": "hook",
                    "detail": "changed IPython's " + ", ".join(changed),
                }
            )

    def previous_cell(self) -> int:
        earlier = [n for n in self.cells.values() if n < self.current]
        return max(earlier) if earlier else 0


STATE_NAMES = (
    "input transformers",
    "AST transformers",
    "custom exception handler",
    "event callbacks",
    "sys.excepthook",
    "display hook",
    "trace function",
)


def _shell():
    module = sys.modules.get("IPython.core.interactiveshell")
    return getattr(getattr(module, "InteractiveShell", None), "_instance", None)


def _cell_number(filename: str) -> int:
    """The execution count (In [N]) IPython gave the cell compiled under ``filename``: its
    compiler names the cell before compiling it; the shell's count is already one on."""
    shell = _shell()
    names = getattr(getattr(shell, "compile", None), "_filename_map", {})
    number = names.get(filename) if isinstance(names, dict) else None
    if type(number) is int:
        return number
    count = getattr(shell, "execution_count", 1)
    return count - 1 if type(count) is int else 0


def _shell_state() -> tuple:
    """What of IPython decides how later cells run, as comparable values."""
    shell = _shell()
    if shell is None:
        return ()
    callbacks = getattr(getattr(shell, "events", None), "callbacks", {}) or {}
    # set_custom_exc puts a handler on the instance; the class's default is a method.
    custom_handler = getattr(shell, "__dict__", {}).get("CustomTB")
    manager = getattr(shell, "input_transformer_manager", None)
    transformers = [
        *(getattr(shell, "input_transformers_post", []) or []),
        *(getattr(manager, "cleanup_transforms", []) or []),
        *(getattr(manager, "line_transforms", []) or []),
        *(getattr(manager, "token_transformers", []) or []),
    ]
    return (
        tuple(map(id, transformers)),
        tuple(map(id, getattr(shell, "ast_transformers", []) or [])),
        (tuple(map(id, getattr(shell, "custom_exceptions", ()) or ())), id(custom_handler)),
        tuple((name, tuple(map(id, found))) for name, found in sorted(callbacks.items())),
        id(sys.excepthook),
        id(sys.displayhook),
        id(sys.gettrace()),
    )


def _generates_code(frame) -> bool:
    """Whether ``frame`` runs in a standard module that makes functions from strings."""
    module = frame.f_globals.get("__name__", "")
    return isinstance(module, str) and module.partition(".")[0] in CODE_GENERATORS


def _short(args: tuple) -> str:
    return repr(args)[:200]


def install(path: str, folder: str | None = None) -> None:
    """Open the record (append-only) and install the hook; call before any notebook code."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    recorder = Recorder(fd, path, os.path.realpath(folder or os.getcwd()))
    recorder.write({"cell": 0, "kind": "start", "pid": os.getpid()})
    sys.addaudithook(recorder.hook())
