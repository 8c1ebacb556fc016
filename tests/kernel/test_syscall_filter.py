"""The grading kernel's system-call filter, installed in a real process: the calls into
another process's memory and into new namespaces fail with EPERM, everything an honest
notebook does (threads, fork, subprocesses, NumPy on several threads) still works, and the
filter is seen from outside in the process's /proc status."""

import json
import os
import subprocess
import sys

import pytest

from autograder.grading.pipeline.autograde.job.kernel_launch import SYSCALL_FILTER_FILE
from autograder.kernel import syscall_filter

# Loads the filter by its file, as the kernel's launcher does, then tries every call.
PROBE = """\
import ctypes, errno, importlib.util, json, os, subprocess, sys, threading
spec = importlib.util.spec_from_file_location("_filter", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
if sys.argv[2] == "filtered":
    module.install()
libc = ctypes.CDLL(None, use_errno=True)
child = os.fork()
if child == 0:
    import time
    time.sleep(30)
    os._exit(0)


def result(value):
    return errno.errorcode.get(ctypes.get_errno(), "?") if value == -1 else "ok"


seen = {}
for name, call in {
    "ptrace": lambda: libc.ptrace(16, child, 0, 0),  # PTRACE_ATTACH: our own child
    "process_vm_readv": lambda: libc.process_vm_readv(child, None, 0, None, 0, 0),
    "unshare": lambda: libc.unshare(0x10000000),  # CLONE_NEWUSER
    "clone_newpid": lambda: libc.syscall(56, 0x20000000 | 17, 0, 0, 0, 0),
}.items():
    ctypes.set_errno(0)
    seen[name] = result(call())
os.kill(child, 9)
os.waitpid(child, 0)
box = []
thread = threading.Thread(target=lambda: box.append(1))
thread.start()
thread.join()
seen["thread"] = "ok" if box else "failed"
seen["subprocess"] = "ok" if subprocess.run(["true"]).returncode == 0 else "failed"
import numpy as np
seen["numpy"] = "ok" if (np.ones((400, 400)) @ np.ones((400, 400)))[0, 0] == 400 else "failed"
seen["active"] = module.filter_active(os.getpid())
print(json.dumps(seen))
"""


def probe(mode: str) -> dict:
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    command = [sys.executable, "-c", PROBE, str(SYSCALL_FILTER_FILE), mode]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_filter_refuses_only_what_no_honest_notebook_does():
    seen = probe("filtered")
    refused = ("ptrace", "process_vm_readv", "unshare", "clone_newpid")
    assert {name: seen[name] for name in refused} == dict.fromkeys(refused, "EPERM")
    assert {seen[name] for name in ("thread", "subprocess", "numpy")} == {"ok"}
    assert seen["active"] is True


def test_without_the_filter_the_same_calls_are_made():
    seen = probe("bare")
    assert seen["ptrace"] == "ok" and seen["process_vm_readv"] == "ok"
    assert seen["active"] is False
    assert not syscall_filter.filter_active(os.getpid())  # this test process has none


def test_a_machine_without_a_filter_is_named():
    assert len(syscall_filter.program("aarch64")) % 8 == 0
    assert syscall_filter.program("aarch64") != syscall_filter.program("x86_64")
    with pytest.raises(syscall_filter.FilterUnavailable, match="no system-call filter for"):
        syscall_filter.program("sparc64")
