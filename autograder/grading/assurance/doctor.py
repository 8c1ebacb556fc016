"""``autograd-course doctor``: what this machine can do for the course, one line per
capability, each with what was found or the command that brings it, then one verdict.

It exits 0 when the machine can grade safely (a sandboxed kernel starts, under the
system-call filter, with torch, Dask and Python as grading needs them) and 1 otherwise,
naming what blocks grading. What only the tests, the hub or the GPU checks need (Chromium,
PostgreSQL, Node.js, root, CUDA) is reported and never blocks.
"""

import importlib.metadata
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.course import system_tools
from autograder.grading.course.repo_paths import REPO_ROOT

LOCK_FILE = REPO_ROOT / "requirements.lock"
KERNEL_TIMEOUT = 90  # seconds for a sandboxed kernel to start and answer (torch not imported)
MINIMUM_PYTHON = (3, 11)
FILTERED = "filter active: True"  # what the sandboxed kernel prints under its filter


@dataclass(frozen=True)
class Finding:
    """One capability: what was found, or what is missing and the command that brings it."""

    capability: str
    found: str
    ok: bool = True
    fix: str = ""
    blocks_grading: bool = False

    def line(self) -> str:
        """``[ok] capability: found`` or ``[--]``/``[!!]`` with the fix."""
        mark = "ok" if self.ok else ("!!" if self.blocks_grading else "--")
        text = f"[{mark}] {self.capability}: {self.found}"
        return f"{text}; to fix: {self.fix}" if self.fix else text


def run(command: list[str], timeout: float = 30) -> tuple[int, str]:
    """(exit status, stdout and stderr) of ``command``; status -1 when it could not run."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        return -1, str(error)
    return done.returncode, (done.stdout + done.stderr).strip()


def python_finding() -> Finding:
    version = platform.python_version()
    found = f"Python {version} ({sys.executable})"
    if sys.version_info[:2] < MINIMUM_PYTHON:
        return Finding("Python", found, False, "use Python 3.11 or newer (make PYTHON=...)", True)
    return Finding("Python", found)


def lock_differences(lock: Path = LOCK_FILE) -> tuple[int, list[str]]:
    """(packages the lock pins for this machine, how each one installed differs from it)."""
    from packaging.requirements import Requirement

    pinned, differ = 0, []
    for raw in lock.read_text().splitlines():
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        pinned += 1
        wanted = next(iter(requirement.specifier)).version
        try:
            installed = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            differ.append(f"{requirement.name} missing ({wanted} pinned)")
            continue
        if installed.split("+", 1)[0] != wanted:  # torch's local build tag (+cpu) aside
            differ.append(f"{requirement.name} {installed} ({wanted} pinned)")
    return pinned, differ


def lock_finding() -> Finding:
    if not LOCK_FILE.is_file():
        return Finding("packages", f"no lock file at {LOCK_FILE}", False, "git checkout it")
    pinned, differ = lock_differences()
    if not differ:
        return Finding("packages", f"all {pinned} of requirements.lock installed as pinned")
    shown = ", ".join(differ[:4]) + (f" and {len(differ) - 4} more" if len(differ) > 4 else "")
    fix = f"{sys.executable} -m pip install -r {LOCK_FILE} (make does it)"
    return Finding(
        "packages", f"{len(differ)} of {pinned} differ from the lock: {shown}", False, fix
    )


def torch_finding() -> Finding:
    try:
        import torch
    except ImportError as error:
        fix = "pip install -r requirements.lock"
        return Finding("torch", f"cannot import torch ({error})", False, fix, True)
    build = f"CUDA {torch.version.cuda} build" if torch.version.cuda else "CPU build"
    return Finding("torch", f"torch {torch.__version__} ({build})")


def cuda_finding() -> Finding:
    import torch

    gpu = system_tools.TOOLS["cuda"]
    name = f"CUDA ({gpu.needed_for})"
    count = torch.cuda.device_count() if torch.version.cuda else 0
    if not count:
        return Finding(
            name, "no CUDA device: cuda not available, those checks skip", False, gpu.install
        )
    return Finding(name, ", ".join(torch.cuda.get_device_name(i) for i in range(count)))


def sandbox_finding() -> Finding:
    from autograder.grading.pipeline.autograde.job import sandbox

    reason = sandbox.unavailable_reason()
    if reason is not None:
        fix = f"unset {sandbox.SANDBOX_ENV}" if sandbox.forced_off() else sandbox.NO_SANDBOX_FIX
        return Finding("sandbox", f"cannot sandbox: {reason}", False, fix, True)
    found = sandbox.sandbox_description()
    if note := system_tools.hidden_note("bwrap"):
        found += f"; the system's bwrap {note}"
    return Finding("sandbox", found)


def filter_finding() -> Finding:
    """Whether the grading kernel's system-call filter loads here, in a process of its own."""
    from autograder.kernel import probe_filter, syscall_filter

    status, out = run([sys.executable, probe_filter.__file__, syscall_filter.__file__])
    name = f"system-call filter ({platform.machine()})"
    if status == 0 and out.splitlines()[-1:] == ["True"]:
        return Finding(name, "loads; a kernel under it cannot trace or enter another process")
    detail = out.splitlines()[-1] if out else f"exit status {status}"
    fix = "grade on x86_64 or aarch64 Linux with seccomp (a kernel built with CONFIG_SECCOMP)"
    return Finding(name, f"does not load: {detail}", False, fix, True)


def sandboxed_kernel_finding() -> Finding:
    """Whether a grading kernel starts in the sandbox, under the filter, and answers."""
    from autograder.grading.pipeline.autograde.job import sandbox

    if sandbox.unavailable_reason() is not None:
        return Finding("sandboxed kernel", "not tried (no sandbox: see above)", False)
    try:
        answer = start_sandboxed_kernel()
    except Exception as error:  # any failure to start is the finding, named
        fix = "run the command again; if it persists, `autograd-course demo` shows the error"
        return Finding("sandboxed kernel", f"did not start: {error}", False, fix, True)
    if answer != FILTERED:
        return Finding(
            "sandboxed kernel", f"started without its filter ({answer})", False, "", True
        )
    return Finding("sandboxed kernel", "starts, answers and runs under the system-call filter")


def start_sandboxed_kernel() -> str:
    """Start a grading kernel as a job does (sandbox, filter, ipc sockets) and ask it for
    its filter state; what it printed."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    from autograder.grading.pipeline.autograde.job.kernel_launch import (
        KERNEL_NAME,
        SYSCALL_FILTER_FILE,
        write_kernelspec,
    )
    from autograder.grading.pipeline.autograde.job.sandbox import JobSandbox, SandboxOptions
    from autograder.kernel import environment

    with tempfile.TemporaryDirectory(prefix="doctor-") as folder:
        root = Path(folder)
        work = root / "work"
        work.mkdir()
        job = JobSandbox(root, work, SandboxOptions())
        try:
            write_kernelspec(root / "jupyter", None, job)
            specs = KernelSpecManager(kernel_dirs=[str(root / "jupyter" / "kernels")])
            manager = KernelManager(
                kernel_name=KERNEL_NAME,
                kernel_spec_manager=specs,
                transport="ipc",
                ip=job.ipc_address,
                connection_file=job.connection_file,
            )
            env = {**os.environ, environment.SYSCALL_FILTER_ENV: str(SYSCALL_FILTER_FILE)}
            log = (root / "kernel.log").open("w")  # the kernel's banner, or why it stopped
            manager.start_kernel(env=env, cwd=str(work), stdout=log, stderr=log)
            try:
                client = manager.client()
                client.start_channels()
                try:
                    client.wait_for_ready(timeout=KERNEL_TIMEOUT)
                except RuntimeError as error:
                    said = (root / "kernel.log").read_text().strip().splitlines()[-1:]
                    raise RuntimeError(f"{error} {' '.join(said)}".strip()) from None
                printed: list[str] = []
                code = (  # the kernel wing is mounted in the sandbox: the same check
                    "import os\nfrom autograder.kernel.syscall_filter import filter_active\n"
                    "print('filter active:', filter_active(os.getpid()))"
                )
                client.execute_interactive(
                    code, timeout=KERNEL_TIMEOUT, output_hook=lambda m: keep_text(m, printed)
                )
                client.stop_channels()
            finally:
                manager.shutdown_kernel(now=True)
                log.close()
        finally:
            job.close()
    return "".join(printed).strip()


def keep_text(message: dict, into: list[str]) -> None:
    """Add a kernel's printed text (stream) or error (name: value) to ``into``."""
    content = message.get("content", {})
    if message.get("msg_type") == "stream":
        into.append(content.get("text", ""))
    elif message.get("msg_type") == "error":
        into.append(f"{content.get('ename')}: {content.get('evalue')}")


def dask_finding() -> Finding:
    try:
        version = importlib.metadata.version("distributed")
    except importlib.metadata.PackageNotFoundError:
        fix = "pip install -r requirements.lock"
        return Finding("Dask", "distributed is not installed", False, fix, True)
    return Finding("Dask", f"distributed {version} (grading workers)")


def chromium_finding() -> Finding:
    tool = system_tools.TOOLS["chromium"]
    path = system_tools.chromium()
    if path is None:
        why = system_tools.hidden_note("chromium") or "not found"
        return Finding(f"Chromium ({tool.needed_for})", why, False, tool.install)
    status, out = run([str(path), "--version"])
    version = out.splitlines()[0] if status == 0 and out else "version unknown"
    return Finding(f"Chromium ({tool.needed_for})", f"{version} ({path})")


def postgres_finding() -> Finding:
    tool = system_tools.TOOLS["postgres"]
    folder = system_tools.postgres_binaries()
    name = f"PostgreSQL ({tool.needed_for})"
    if folder is None:
        why = system_tools.hidden_note("postgres") or "not found (SQLite gradebooks work)"
        return Finding(name, why, False, tool.install)
    status, out = run([str(folder / "pg_ctl"), "--version"])
    return Finding(name, f"{out if status == 0 else 'version unknown'} ({folder})")


def hub_finding() -> Finding:
    from autograder.grading.authoring.hub.proxy import NODE_FOLDER, PROXY_PACKAGE, node_missing

    tool = system_tools.TOOLS["node"]
    name = f"Node.js and npm ({tool.needed_for})"
    missing = node_missing()
    if missing:
        return Finding(name, missing.split(":", 1)[0], False, tool.install)
    versions = []
    for program in ("node", "npm"):
        status, out = run([str(system_tools.which(program, "node")), "--version"])
        versions.append(f"{program} {out if status == 0 else 'version unknown'}")
    proxy = NODE_FOLDER / "node_modules" / ".bin" / PROXY_PACKAGE
    state = "installed" if proxy.exists() else "installed by the hub on its first start"
    return Finding(name, f"{', '.join(versions)}; {PROXY_PACKAGE} {state}")


def accounts_finding() -> Finding:
    from autograder.grading.authoring.hub.accounts import AccountError, require_root

    tool = system_tools.TOOLS["root"]
    name = f"Unix accounts ({tool.needed_for})"
    try:
        require_root()
    except AccountError as error:
        return Finding(name, f"cannot make them: {error}", False, tool.install)
    return Finding(name, "this user can create them (root, useradd)")


# In the order printed: grading's needs first, then what tests, the hub and the GPU add.
CHECKS: list[Callable[[], Finding]] = [
    python_finding,
    lock_finding,
    torch_finding,
    dask_finding,
    sandbox_finding,
    filter_finding,
    sandboxed_kernel_finding,
    cuda_finding,
    chromium_finding,
    postgres_finding,
    hub_finding,
    accounts_finding,
]


def examine(checks: list[Callable[[], Finding]] | None = None) -> list[Finding]:
    """Every capability's finding; a check that fails unexpectedly is a finding too."""
    findings = []
    for check in checks or CHECKS:
        try:
            findings.append(check())
        except Exception as error:  # the doctor must finish and say what it saw
            name = check.__name__.removesuffix("_finding")
            findings.append(Finding(name, f"check failed: {error!r}", False, "", True))
    return findings


def verdict(findings: list[Finding]) -> str:
    """The one-line verdict: can this machine grade safely, and what is not there."""
    blocking = [f for f in findings if f.blocks_grading and not f.ok]
    if blocking:
        named = "; ".join(f"{f.capability}: {f.found}" for f in blocking)
        return f"doctor: this machine cannot grade safely: {named}"
    absent = [f.capability.split(" (")[0] for f in findings if not f.ok]
    tail = f" (not here: {', '.join(absent)})" if absent else ""
    return f"doctor: this machine can grade safely{tail}"


def main(brief: bool = False) -> int:
    """Print each finding (or only the verdict, ``brief``); 0 when grading is safe here."""
    findings = examine()
    if not brief:
        for finding in findings:
            print(finding.line())
    print(verdict(findings))
    return 1 if any(f.blocks_grading and not f.ok for f in findings) else 0
