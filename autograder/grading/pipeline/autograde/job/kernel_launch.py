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
from autograder.kernel import launch_kernel, runtime_audit, syscall_filter

KERNEL_NAME = "python3"
# The kernel's launcher (limits, filter, audit hook, refused packages, then ipykernel), run
# by its path; told through environment variables (kernel.environment) what to install.
LAUNCHER_FILE = Path(launch_kernel.__file__).resolve()
# The runtime record's audit hook, loaded by its file (see runtime_audit): the kernel must not
# import the grader's packages.
AUDIT_HOOK_FILE = Path(runtime_audit.__file__).resolve()
# The system-call filter (see kernel.syscall_filter), loaded by its file in the same way.
SYSCALL_FILTER_FILE = Path(syscall_filter.__file__).resolve()


def kernel_argv(memory_limit_mb: int | None, sandbox: JobSandbox | None = None) -> list[str]:
    """The kernel command: this Python, limited to ``memory_limit_mb`` of address space, in
    ``sandbox`` when given (with its process-count limit where no cgroup enforces one)."""
    limit = (memory_limit_mb or 0) * 2**20
    # As root RLIMIT_NPROC is not enforced, hence the cgroup; in the sandbox's own user
    # namespace it counts the job's processes only.
    processes = sandbox.max_processes if sandbox is not None and not sandbox.cgroup else 0
    kernel = [sys.executable, str(LAUNCHER_FILE), str(limit), str(processes)]
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
