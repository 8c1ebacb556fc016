"""Trusted kernels forked from a warm process: torch and ipykernel imported once per grading
worker instead of once per submission (about 1.4 s of CPU each time).

A trusted kernel runs no student code, so each one can be a fresh fork of a process (the
warm process) that imported what every trusted kernel imports first and nothing of a
job: no environment of one is read before the fork. jupyter_client still starts a process
per kernel, the relay of the kernelspec: it hands its command line, environment, working
folder and standard streams to the warm process, which forks the kernel; the relay passes
the kernel's signals on and exits with its status, and a relay that ends (killed) ends its
kernel. The warm process dies with the worker that started it, and each kernel with the
warm process.

Set ``AUTOGRADER_FORKED_KERNELS=off`` to start each trusted kernel as a plain process.
"""

import array
import importlib
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from autograder.kernel import relay_kernel

SWITCH_ENV = "AUTOGRADER_FORKED_KERNELS"
# Imported by the warm process: what a trusted kernel imports first, and that reads no
# job's environment when imported (the checks do: their language; so they are not here).
# ipykernel.debugger (and debugpy's pydevd with it) is imported as each kernel starts, not
# with kernelapp: 0.06 of a trusted kernel's 0.13 CPU-seconds to its first cell. It reads
# PYDEVD_* variables, which no job sets, and a trusted kernel is never debugged.
WARM_MODULES = ("numpy", "torch", "ipykernel.kernelapp", "ipykernel.debugger")
# Imported by the warm process when a kernel's request asks for them (EXTRAS_ENV), before it
# forks that kernel and every later one: slow imports that only some notebooks' trusted
# kernels make, each found by a word of the notebook's code (a warm process that imported
# them all would cost every grading worker 1.2 s more, most of them for nothing).
ON_REQUEST = {
    # torch imports it (and sympy with it) at an optimizer's first construction: about 1 s
    # of CPU in each trusted kernel of 05, 07, 08 and 09
    "torch._dynamo": ("torch.optim",),
    # torch.autograd imports it (and sympy) at the first backward given a gradient tensor,
    # which check_parity's torch side makes: 0.4 s of CPU in nearly every course kernel
    "torch.fx.experimental.symbolic_shapes": ("backward", "parity"),
    # the setup cells of the notebooks that plot import it: 0.3 s a kernel
    "matplotlib.pyplot": ("matplotlib",),
}
EXTRAS_ENV = "AUTOGRADER_WARM_MODULES"
# pyplot reads its backend when imported: the warm process sets the one ipykernel would set.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
# Read when those modules are imported: a warm process serves one set of their values.
IMPORT_TIME_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "MALLOC_ARENA_MAX",
    "MPLBACKEND",
    "MPLCONFIGDIR",
)
_PR_SET_PDEATHSIG = 1

# The relay, run by its path as the kernelspec's command (see kernel.relay_kernel).
RELAY_FILE = Path(relay_kernel.__file__).resolve()


def enabled() -> bool:
    """Whether trusted kernels are forked (the default) rather than started afresh."""
    return os.environ.get(SWITCH_ENV, "on").lower() not in ("off", "0", "false", "no")


def relay_argv(kernel_args: list[str]) -> list[str]:
    """The kernelspec command that has this worker's warm process fork the kernel."""
    return [sys.executable, "-S", str(RELAY_FILE), warm_socket(), *kernel_args]


_warm: dict[tuple, tuple[subprocess.Popen, str]] = {}


def extra_modules(sources: Iterable[str]) -> str:
    """The ON_REQUEST modules that code with these ``sources`` asks for, as EXTRAS_ENV's value."""
    text = "\n".join(sources)
    return ",".join(sorted(m for m, words in ON_REQUEST.items() if any(w in text for w in words)))


def _import_requested(value: str) -> None:
    """Import the ON_REQUEST modules ``value`` names that the warm process has not imported."""
    for name in value.split(","):
        if name not in ON_REQUEST or name in sys.modules:
            continue
        if name.startswith("matplotlib") and not os.environ.get("MPLBACKEND"):
            os.environ["MPLBACKEND"] = INLINE_BACKEND
        with suppress(Exception):  # the kernel imports it itself, and says what failed
            importlib.import_module(name)


def warm_pids() -> set[int]:
    """The pids of this process's warm processes (kept by the sweeps of leftovers)."""
    return {process.pid for process, _ in _warm.values() if process.poll() is None}


def warm_socket() -> str:
    """The socket of this process's warm process for the import-time environment now,
    started when there is none (or it has ended)."""
    key = tuple(os.environ.get(name) for name in IMPORT_TIME_VARIABLES)
    found = _warm.get(key)
    if found is not None and found[0].poll() is None:
        return found[1]
    # Here, not at the top: the warm process runs this module, and the autograde package
    # would bring Dask and nbgrader into every trusted kernel forked from it.
    from autograder.grading.course.owned_temp import owned_temp_folder

    path = os.path.join(owned_temp_folder("trusted-kernels-"), "warm.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    # Nothing of the job that starts it: its token would have it killed with the job.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_")}
    env.update(PYTHONSAFEPATH="1", PYTHONNOUSERSITE="1")
    command = [sys.executable, "-m", __name__, str(listener.fileno()), str(os.getpid())]
    # Its own streams lead nowhere: each kernel gets its relay's, and the job's captured
    # output (where this one's would go) is a file deleted with the job.
    quiet = subprocess.DEVNULL
    # In "/", not in this process's folder: a job's folder, where a worker grades, is deleted
    # with the job, and an import that reads the working folder (torch._dynamo's) then fails.
    process = subprocess.Popen(
        command,
        pass_fds=[listener.fileno()],
        env=env,
        cwd="/",
        stdin=quiet,
        stdout=quiet,
        stderr=quiet,
    )
    listener.close()  # the warm process holds it; a kernel asked for meanwhile waits in it
    _warm[key] = (process, path)
    return path


def _die_with_parent(parent: int) -> None:
    """SIGKILL when the parent ends; at once if it ended before this was asked."""
    import ctypes

    with suppress(AttributeError, OSError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    """A relay's request and the descriptors of its standard streams."""
    space = socket.CMSG_SPACE(3 * array.array("i").itemsize)
    data, ancillary, _, _ = connection.recvmsg(1 << 16, space)
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    size = int.from_bytes(data[:4], "big")
    body = data[4:]
    while len(body) < size:
        more = connection.recv(size - len(body))
        if not more:
            raise ConnectionError("the relay closed mid-request")
        body += more
    return json.loads(body), list(fds)


def _become_kernel(request: dict, fds: list[int], warm: int) -> None:
    """In the forked child: take the relay's streams, environment and folder, run ipykernel,
    and end with its status (never returning into the warm process's loop)."""
    code = 1
    try:
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.setsid()
        _die_with_parent(warm)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        threads = os.environ.get("OMP_NUM_THREADS", "")
        if threads.isdigit() and int(threads) > 0:
            import torch

            torch.set_num_threads(int(threads))
        sys.argv = ["ipykernel_launcher", *request["argv"]]
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        with suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def serve(listener: socket.socket) -> None:
    """The warm process's loop: fork a kernel per relay, report each kernel's status to its
    relay, kill the kernel of a relay that went away."""
    kernels: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, relay)
    while True:
        relays = {relay.fileno(): pidfd for pidfd, (_, relay) in kernels.items()}
        ready, _, _ = select.select([listener, *relays, *kernels], [], [])
        for fd in ready:
            if fd is listener:
                relay, _ = listener.accept()
                try:
                    request, fds = _receive(relay)
                except (OSError, ValueError):
                    relay.close()
                    continue
                _import_requested(str(request.get("env", {}).get(EXTRAS_ENV, "")))
                warm = os.getpid()
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    for pidfd, (_, other) in kernels.items():
                        other.close()
                        os.close(pidfd)
                    relay.close()
                    _become_kernel(request, fds, warm)
                for received in fds:
                    os.close(received)
                with suppress(OSError):
                    relay.sendall(f"{pid}\n".encode())
                kernels[os.pidfd_open(pid)] = (pid, relay)
            elif fd in relays:  # a relay said something or went away: it is gone
                pidfd = relays[fd]
                with suppress(ProcessLookupError):
                    os.kill(kernels[pidfd][0], signal.SIGKILL)
                _end(kernels, pidfd)
            elif fd in kernels:
                _end(kernels, fd)


def _end(kernels: dict[int, tuple[int, socket.socket]], pidfd: int) -> None:
    """Reap an ended (or killed) kernel and tell its relay how it ended."""
    pid, relay = kernels.pop(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    with suppress(OSError):
        relay.sendall(f"{os.waitstatus_to_exitcode(status) & 0xFF}\n".encode())
    relay.close()


def main() -> None:
    """``python -m autograder.grading.pipeline.verdicts.forked_kernels LISTENER-FD PARENT-PID``."""
    _die_with_parent(int(sys.argv[2]))
    listener = socket.socket(fileno=int(sys.argv[1]))
    for name in WARM_MODULES:
        importlib.import_module(name)
    _format_a_traceback()
    serve(listener)


def _format_a_traceback() -> None:
    """Format one traceback as a kernel does: the first one a process formats compiles
    pygments' Python lexer and imports stack_data (0.06 CPU-seconds in each trusted kernel
    with a failing test: its first failure took 0.12-0.16, its second 0.04-0.06)."""
    from IPython.core.ultratb import AutoFormattedTB

    try:
        raise ValueError("a warm process's own traceback")
    except ValueError:
        AutoFormattedTB(mode="Context", theme_name="linux").structured_traceback(*sys.exc_info())


if __name__ == "__main__":
    main()
