"""The grading kernel's launcher, run by path as the kernel's command
(``python launch_kernel.py MEMORY PROCESSES IPYKERNEL-ARGS...``): it sets the kernel's limits
and defences in the kernel's own process, then runs ipykernel in it.

In order: SIGINT raises KeyboardInterrupt again (the sandbox's launcher ignores it and
bwrap inherits that); the address-space limit (MEMORY, bytes, 0 for none) and the
process-count limit (PROCESSES, 0 for none); PR_SET_PDEATHSIG, so a killed worker takes its
kernel along; the system-call filter while the kernel has one thread (a kernel that cannot
have it does not start); the runtime record's audit hook, before any notebook code
(neither can be removed); the refusal of the packages named in ``NO_IMPORT_ENV``; then
ipykernel. Each defence is asked for through the environment (``environment.py``) and the
variable is removed before the kernel runs. Standard library only: the kernel imports
nothing of the grader, so this file's neighbours are loaded by their paths.
"""

import ctypes
import importlib.util
import os
import resource
import runpy
import signal
import sys
from types import ModuleType

_PR_SET_PDEATHSIG = 1


def load(name: str, path: str) -> ModuleType:
    """The module in the file ``path``, run under ``name`` and left out of sys.modules."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Refused:
    """An import finder that refuses the top-level packages ``names`` as missing ones."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in self.names:
            message = f"No module named {name!r} (not available while grading)"
            raise ModuleNotFoundError(message, name=name)
        return None


def set_limits(memory: int, processes: int) -> None:
    """The address-space and process-count limits (0: none), and death with the parent."""
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if processes > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (AttributeError, OSError):
        pass


def install_defences(names: ModuleType) -> None:
    """The system-call filter, the audit hook and the refused packages that the environment
    variables named in ``names`` ask for; each variable is removed."""
    if os.environ.get(names.SYSCALL_FILTER_ENV):
        load("_syscall_filter", os.environ.pop(names.SYSCALL_FILTER_ENV)).install()
    if os.environ.get(names.AUDIT_HOOK_ENV):
        audit = load("_runtime_audit", os.environ.pop(names.AUDIT_HOOK_ENV))
        record = os.environ.pop(names.RECORD_ENV, None)  # not inherited by the cells' processes
        if record:
            audit.install(record)
    refused = frozenset(filter(None, os.environ.pop(names.NO_IMPORT_ENV, "").split(",")))
    if refused:
        sys.meta_path.insert(0, Refused(refused))


def main(argv: list[str]) -> None:
    """Limit this process, install its defences, then become the kernel (never returns
    while the kernel runs)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    set_limits(int(argv[1]), int(argv[2]))
    here = os.path.dirname(os.path.abspath(__file__))
    install_defences(load("_kernel_environment", os.path.join(here, "environment.py")))
    if not sys.flags.safe_path:
        # As ``python -c`` has it: the kernel's working folder first on the path, not this
        # file's folder (its modules are not the notebook's to import by bare name).
        sys.path[0] = ""
    sys.argv = ["ipykernel_launcher", *argv[3:]]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv)
