"""The grading kernel's launch: a private kernelspec whose command limits the kernel's
memory and ties the kernel's life to the worker that started it.

A long-lived worker grades many submissions, so a memory limit set on it would be shared by
all of them and inherited by nothing useful; the limit is set in the kernel process itself,
before ipykernel starts. The kernelspec is written into each job's own folder and found
through ``JUPYTER_PATH`` (searched before any installed kernelspec), under the name the
course's notebooks ask for.
"""

import json
import sys
from pathlib import Path

from autograder.grading.pipeline.autograde.job.sandbox import JobSandbox
from autograder.kernel import runtime_audit, syscall_filter

KERNEL_NAME = "python3"
# The runtime record's audit hook, loaded by its file (see runtime_audit): the kernel must not
# import the grader's packages. Named to the kernel through this variable, which it removes.
AUDIT_HOOK_ENV = "AUTOGRADER_AUDIT_HOOK"
AUDIT_HOOK_FILE = Path(runtime_audit.__file__).resolve()
# The system-call filter (see kernel.syscall_filter), loaded by its file in the same way.
SYSCALL_FILTER_ENV = "AUTOGRADER_SYSCALL_FILTER"
SYSCALL_FILTER_FILE = Path(syscall_filter.__file__).resolve()
# Top-level packages the kernel must not import (comma-separated; removed by the kernel): an
# unsandboxed kernel's best effort at having no autograd library (student code in the same
# process can undo it; the runtime record flags any such import). The sandbox mounts none.
NO_IMPORT_ENV = "AUTOGRADER_NO_IMPORT"

# Runs as the kernel's first code: the address-space limit (argv[1], bytes, 0 for none),
# the process-count limit (argv[2], 0 for none), then PR_SET_PDEATHSIG so a killed worker
# takes its kernel along, then ipykernel itself. SIGINT raises KeyboardInterrupt again
# (ignored by the sandbox's launcher, inherited through bwrap). The system-call filter
# goes in while the kernel has one thread (a kernel that cannot have it does not start),
# the runtime record's audit hook last, before any notebook code (neither can be removed),
# then the refusal of the packages named in NO_IMPORT_ENV.
LAUNCHER = """\
import ctypes, resource, runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # the sandbox's launcher ignores it
limit, processes = int(sys.argv[1]), int(sys.argv[2])
if limit > 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
if processes > 0:
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
except (AttributeError, OSError):
    pass
import importlib.util, os
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
if os.environ.get("AUTOGRADER_SYSCALL_FILTER"):
    load("_syscall_filter", os.environ.pop("AUTOGRADER_SYSCALL_FILTER")).install()
if os.environ.get("AUTOGRADER_AUDIT_HOOK"):
    load("_runtime_audit", os.environ.pop("AUTOGRADER_AUDIT_HOOK")).install_from_environment()
refused = frozenset(filter(None, os.environ.pop("AUTOGRADER_NO_IMPORT", "").split(",")))
if refused:
    class Refused:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in refused:
                message = f"No module named {name!r} (not available while grading)"
                raise ModuleNotFoundError(message, name=name)
            return None
    sys.meta_path.insert(0, Refused())
sys.argv = ["ipykernel_launcher", *sys.argv[3:]]
runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
"""


def kernel_argv(memory_limit_mb: int | None, sandbox: JobSandbox | None = None) -> list[str]:
    """The kernel command: this Python, limited to ``memory_limit_mb`` of address space, in
    ``sandbox`` when given (with its process-count limit where no cgroup enforces one)."""
    limit = (memory_limit_mb or 0) * 2**20
    # As root RLIMIT_NPROC is not enforced, hence the cgroup; in the sandbox's own user
    # namespace it counts the job's processes only.
    processes = sandbox.max_processes if sandbox is not None and not sandbox.cgroup else 0
    kernel = [sys.executable, "-c", LAUNCHER, str(limit), str(processes)]
    kernel += ["-f", "{connection_file}"]
    return sandbox.wrap(kernel) if sandbox is not None else kernel


def write_kernelspec(
    jupyter_dir: Path, memory_limit_mb: int | None, sandbox: JobSandbox | None = None
) -> Path:
    """Write the limited kernelspec under ``jupyter_dir`` (a JUPYTER_PATH entry)."""
    folder = jupyter_dir / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": kernel_argv(memory_limit_mb, sandbox),
        "display_name": "Python 3 (grading, limited)",
        "language": "python",
        "metadata": {"debugger": False},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1))
    return folder
