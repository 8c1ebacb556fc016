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

KERNEL_NAME = "python3"
# The runtime record's audit hook, loaded by its file (see runtime_audit): the kernel must not
# import the grader's packages. Named to the kernel through this variable, which it removes.
AUDIT_HOOK_ENV = "AUTOGRADER_AUDIT_HOOK"
AUDIT_HOOK_FILE = Path(__file__).resolve().parents[1] / "integrity" / "runtime_audit.py"

# Runs as the kernel's first code: the address-space limit (argv[1], bytes, 0 for none),
# then PR_SET_PDEATHSIG so a killed worker takes its kernel along, then the runtime record's
# audit hook (before any notebook code, and it cannot be removed), then ipykernel itself.
LAUNCHER = """\
import ctypes, resource, runpy, signal, sys
limit = int(sys.argv[1])
if limit > 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
except (AttributeError, OSError):
    pass
import importlib.util, os
if os.environ.get("AUTOGRADER_AUDIT_HOOK"):
    hook = os.environ.pop("AUTOGRADER_AUDIT_HOOK")
    spec = importlib.util.spec_from_file_location("_runtime_audit", hook)
    audit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(audit)
    audit.install_from_environment()
sys.argv = ["ipykernel_launcher", *sys.argv[2:]]
runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
"""


def kernel_argv(memory_limit_mb: int | None) -> list[str]:
    """The kernel command: this Python, limited to ``memory_limit_mb`` of address space."""
    limit = (memory_limit_mb or 0) * 2**20
    return [sys.executable, "-c", LAUNCHER, str(limit), "-f", "{connection_file}"]


def write_kernelspec(jupyter_dir: Path, memory_limit_mb: int | None) -> Path:
    """Write the limited kernelspec under ``jupyter_dir`` (a JUPYTER_PATH entry)."""
    folder = jupyter_dir / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": kernel_argv(memory_limit_mb),
        "display_name": "Python 3 (grading, limited)",
        "language": "python",
        "metadata": {"debugger": False},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1))
    return folder
