"""Lending to a copy of the student's kernel (``verdicts.lending``), with a real student
process serving the channel as a kernel does and the trusted side in this process: the
copy is checked from outside before anything is lent, what it was lent or made never
reaches the kernel, a dead copy says so at once, and no copy outlives its test cell."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from autograder.grading.course import system_tools
from autograder.grading.pipeline.autograde.job.sandbox import (
    BASE_OPTIONS,
    find_bwrap,
    unavailable_reason,
)
from autograder.grading.pipeline.verdicts import lending, trusted
from autograder.grading.pipeline.verdicts.proxy import SESSION, evaluate
from autograder.kernel import syscall_filter

STUDENT = """\
import os, sys
from autograder.kernel import serve as served
from autograder.kernel import syscall_filter

if sys.argv[2] == "filtered":  # as the grading kernel's launcher does
    syscall_filter.install()


class Box:
    def __init__(self, value):
        self.value = value

    def double(self):
        return self.value * 2


{extra}
while True:
    served.serve(sys.argv[1])
"""

# A cheating student side: the copy keeps a pipe to the kernel besides its connection.
KEEP_PIPE = """\
reader, writer = os.pipe()


def keep_pipe(sock):
    for fd in range(1024):
        if fd not in (sock.fileno(), writer):
            try:
                os.close(fd)
            except OSError:
                pass
    return sock


served._alone_with = keep_pipe
"""

SHARED_MEMORY = """\
import mmap
shared = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)  # made before the fork: both see it
"""


# A cheating student side: the copy hands its connection over to the kernel (SCM_RIGHTS,
# over a socket pair made before the fork) and keeps only its end of the pair.
HAND_OVER = """\
import array, socket, time
mine, kernels = socket.socketpair()


def hand_over(path, channel):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    fds = array.array("i", [sock.fileno()])
    mine.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    for fd in range(1024):
        if fd != mine.fileno():
            try:
                os.close(fd)
            except OSError:
                pass
    time.sleep(60)
    os._exit(0)


served._copy_main = hand_over
"""

# A cheating student side: the kernel connects itself instead of forking a copy.
NO_COPY = """\
import socket
served.serve_copy = lambda path, channel: socket.socket(socket.AF_UNIX).connect(path)
"""


class Student:
    """A student process serving the channel, cell after cell, as a kernel does."""

    def __init__(self, tmp_path, extra="", sandboxed=False, filtered=True):
        for table in (SESSION.proxies, SESSION.classes, SESSION.error_classes):
            table.clear()  # this student process numbers its objects anew
        self.path = str(tmp_path / "channel.sock")
        trusted.listen(self.path)
        code = STUDENT.format(extra=extra)
        env = dict(os.environ, PYTHONPATH=os.getcwd())
        command = [sys.executable, "-c", code, self.path, "filtered" if filtered else "bare"]
        if sandboxed:  # its own mounts, as a grading kernel's: a private /tmp to write in
            folder, here = str(tmp_path), os.getcwd()
            # The bwrap grading uses (the system's, else the wheel's), never one found by name.
            sandbox = [find_bwrap()[0], "--ro-bind", "/", "/", *BASE_OPTIONS]
            # The checkout and its environment may live under /tmp (a CI clone), which the
            # sandbox replaces with its own: show them again, read-only.
            for seen in (here, sys.prefix):
                sandbox += ["--ro-bind", seen, seen]
            command = [*sandbox, "--bind", folder, folder, "--chdir", here, *command]
        self.process = subprocess.Popen(command, env=env)
        self.namespace = {}

    def begin(self, *names):
        trusted.begin(self.namespace, list(names), 30.0, 20.0)
        return [self.namespace[name] for name in names]

    def close(self):
        trusted.end()
        self.process.kill()
        self.process.wait()
        trusted.stop_listening()


@pytest.fixture
def student(tmp_path):
    made = []

    def start(extra="", sandboxed=False, filtered=True):
        if sandboxed and unavailable_reason():
            pytest.skip(system_tools.missing("bwrap", f"no sandbox here: {unavailable_reason()}"))
        made.append(Student(tmp_path, extra, sandboxed, filtered))
        return made[-1]

    yield start
    for one in made:
        one.close()


def state(pid):
    try:
        return lending.stat_fields(pid)[0]
    except FileNotFoundError:
        return "gone"


def test_lent_parts_reach_only_the_copy_and_die_with_it(student):
    kernel = student()
    (Box,) = kernel.begin("Box")
    kept = Box(3)
    with lending.lending_copy(["Box.double"]):
        copy = SESSION.copy
        assert copy.pid != SESSION.kernel_pid
        assert state(SESSION.kernel_pid) == "T"  # the kernel is stopped meanwhile
        evaluate("setattr(Box, 'stash', 'reference source')", {"Box": Box})
        made = Box(5)
        assert made.double() == 10 and kept.double() == 6
    assert evaluate("getattr(Box, 'stash', None)", {"Box": Box}) == "reference source"
    trusted.end()
    assert state(copy.pid) == "gone"  # killed, and reaped by the kernel
    (Box,) = kernel.begin("Box")
    assert state(SESSION.kernel_pid) in "RS"
    # the kernel never saw what the copy was given, and serves on its own connection
    assert evaluate("getattr(Box, 'stash', None)", {"Box": Box}) is None
    assert kept.double() == 6
    with pytest.raises(ReferenceError, match="made in a copy of your kernel that has ended"):
        made.double()
    assert Box(7).value == 7  # new objects of the kernel: their ids are not the copy's


def test_a_copy_serves_until_the_cell_ends_and_a_checked_part_gets_a_fresh_one(student):
    kernel = student()
    (Box,) = kernel.begin("Box")
    with lending.lending_copy(["Box.double"], ["Box.value"]):
        first = SESSION.copy
        made = Box(2)
    assert made.double() == 4  # after the block, the copy still serves the cell
    with lending.lending_copy(["Box.value"], ["Box.other"]):
        assert SESSION.copy is first
    with lending.lending_copy(["Box.other"], ["Box.double"]):  # lent to the first copy
        assert SESSION.copy is not first
        assert state(first.pid) == "gone"
        with pytest.raises(ReferenceError):
            made.double()


# A kernel's memory, as a notebook's would be: NumPy and 400 MB of arrays in use.
BALLAST = "import numpy as np\nballast = np.ones(50_000_000)\n"


@pytest.mark.parametrize("extra", ["", BALLAST], ids=["small", "400MB"])
def test_the_cost_of_a_copy(student, extra):
    kernel = student(extra)
    kernel.begin("Box")
    started = time.perf_counter()
    for _ in range(5):
        with lending.lending_copy(["Box.double"]):
            pass
        lending.end_copy()
    seconds = (time.perf_counter() - started) / 5
    print(f"one copy, started, checked and ended: {seconds * 1000:.1f} ms")
    assert seconds < 2


def test_a_copy_that_keeps_a_pipe_is_refused(student):
    kernel = student(KEEP_PIPE)
    kernel.begin("Box")
    writer = kernel.namespace.get("writer")
    with pytest.raises(lending.LendingRefused, match=r"held a pipe \(fd \d+\).*lending refused"):
        with lending.lending_copy(["Box.double"]):
            pass
    assert writer is None  # (the cheat's pipe is the student's, not this side's)
    assert SESSION.copy is None
    # the kernel goes on serving; the refused copy was killed
    assert state(SESSION.kernel_pid) in "RS"
    (Box,) = kernel.begin("Box")
    assert Box(1).double() == 2


def test_a_copy_sharing_memory_with_the_kernel_is_refused(student):
    kernel = student(SHARED_MEMORY)
    kernel.begin("Box")
    with pytest.raises(lending.LendingRefused, match="shares memory with the kernel"):
        with lending.lending_copy(["Box.double"]):
            pass


def test_an_honest_copy_holds_only_its_connection_and_dev_null(student):
    kernel = student()
    kernel.begin("Box")
    with lending.lending_copy(["Box.double"]):
        pid = SESSION.copy.pid
        folder = f"/proc/{pid}/fd"
        targets = sorted(os.readlink(f"{folder}/{fd}") for fd in os.listdir(folder))
        limits = open(f"/proc/{pid}/limits").read()
    assert targets[:3] == ["/dev/null"] * 3 and len(targets) == 4
    assert targets[3].startswith("socket:[")
    assert "Max open files            0                    0" in limits


def test_a_memory_error_in_the_copy_is_a_memory_error(student):
    kernel = student(
        textwrap.dedent("""\
        def bomb():
            blocks = []
            while True:
                blocks.append(bytearray(2**26))
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))
        """)
    )
    (bomb,) = kernel.begin("bomb")
    with lending.lending_copy(["bomb"]):
        with pytest.raises(MemoryError):
            bomb()


def test_a_copy_that_dies_says_so_at_once(student):
    kernel = student("def die():\n    import signal\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    (die,) = kernel.begin("die")
    started = time.monotonic()
    with lending.lending_copy(["die"]):
        with pytest.raises(lending.CopyDied, match=r"died \(signal 9, SIGKILL\): out of memory"):
            die()
    assert time.monotonic() - started < 5
    trusted.end()
    (die,) = kernel.begin("die")  # the kernel itself lives on
    assert state(SESSION.kernel_pid) in "RS"


@pytest.mark.parametrize(
    ("cheat", "reason"),
    [
        # The check may come while the copy is still closing what it inherited (refused
        # for that) or after (refused for the socket it kept): refused either way.
        (HAND_OVER, r"held (a socket other than its connection|a file .*\(fd 1\))"),
        (NO_COPY, "is not a copy of your kernel"),
    ],
    ids=["hand-over", "no-copy"],
)
def test_a_copy_that_is_not_what_it_seems_is_refused(student, cheat, reason):
    kernel = student(cheat)
    kernel.begin("Box")
    with pytest.raises(lending.LendingRefused, match=reason):
        with lending.lending_copy(["Box.double"]):
            pass
    assert SESSION.copy is None and state(SESSION.kernel_pid) in "RSZ"


# A cheating student side: what the copy is lent, it writes out as the target of a symbolic
# link (a call by path: no file descriptor needed) for the kernel to read later.
LEAVE_BY_NAME = """\
def leave(text):
    os.symlink(text, "/tmp/stash")
"""


def test_a_copy_that_leaves_anything_in_the_file_system_ends_the_kernel(student):
    kernel = student(LEAVE_BY_NAME, sandboxed=True)
    (leave,) = kernel.begin("leave")
    kernel_pid = SESSION.kernel_pid
    with lending.lending_copy(["leave"]):
        leave("the reference's source")
    with pytest.raises(lending.LendingRefused, match=r"\(made /tmp/stash; .*kernel was ended"):
        trusted.end()
    kernel.process.wait(timeout=10)  # the whole sandbox ends with its kernel
    assert state(kernel_pid) == "gone"


def test_an_honest_sandboxed_copy_leaves_nothing_and_the_kernel_goes_on(student):
    kernel = student(sandboxed=True)
    (Box,) = kernel.begin("Box")
    with lending.lending_copy(["Box.double"]):
        assert SESSION.copy.files  # the sandbox's writable folders, snapshotted
        assert Box(4).double() == 8
    trusted.end()
    (Box,) = kernel.begin("Box")
    assert Box(1).double() == 2 and state(SESSION.kernel_pid) in "RS"


# A cheating student side: the copy reaches its stopped kernel by signals, or wakes it up
# (and stops it again) to run while the copy holds what it was lent.
REACH_KERNEL = """\
import signal, time


def wake():
    os.kill(os.getppid(), signal.SIGCONT)
    time.sleep(0.2)
    os.kill(os.getppid(), signal.SIGSTOP)


def poke():
    os.kill(os.getppid(), signal.SIGUSR1)
"""


@pytest.mark.parametrize(
    ("call", "reason"),
    [("wake", "your kernel ran while it was stopped"), ("poke", "signals were sent")],
)
def test_a_copy_that_wakes_or_signals_its_kernel_ends_it(student, call, reason):
    kernel = student(REACH_KERNEL)
    (reach,) = kernel.begin(call)
    with lending.lending_copy([call]):
        reach()
    with pytest.raises(lending.LendingRefused, match=f"{reason}.*kernel was ended"):
        trusted.end()
    kernel.process.wait(timeout=10)


# A cheating student side: from the copy, into the stopped kernel's memory and descriptors.
REACH_MEMORY = """\
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
CALLS = {
    "ptrace": lambda: libc.ptrace(16, os.getppid(), 0, 0),  # PTRACE_ATTACH
    "process_vm_writev": lambda: libc.process_vm_writev(os.getppid(), None, 0, None, 0, 0),
    "pidfd_getfd": lambda: libc.syscall(438, 0, 0, 0),
}


def reach(names=tuple(CALLS)):
    failed = {}
    for name in names:
        call = CALLS[name]
        ctypes.set_errno(0)
        failed[name] = errno.errorcode.get(ctypes.get_errno(), "?") if call() == -1 else "ok"
    return failed
"""


def test_the_copy_cannot_reach_into_the_stopped_kernel(student):
    kernel = student(REACH_MEMORY)
    (reach,) = kernel.begin("reach")
    with lending.lending_copy(["reach"]):
        copy = SESSION.copy
        assert syscall_filter.filter_active(copy.pid)  # seen from outside
        assert reach() == {"ptrace": "EPERM", "process_vm_writev": "EPERM", "pidfd_getfd": "EPERM"}
    trusted.end()
    kernel.begin("reach")  # nothing reached the kernel: it goes on


def test_without_the_filter_the_same_calls_reach_the_kernel_and_lending_is_refused(student):
    # The control: without the filter the call is made (here from the kernel, into its own
    # parent, writing nothing), and a copy without the filter is never lent to.
    kernel = student(REACH_MEMORY, filtered=False)
    (reach,) = kernel.begin("reach")
    assert reach(["process_vm_writev"]) == {"process_vm_writev": "ok"}
    with pytest.raises(lending.LendingRefused, match="without the grading kernel's system-call"):
        with lending.lending_copy(["reach"]):
            pass


EXIT_WITH = "def leave_status(code):\n    os._exit(code)\n"


def test_a_copy_that_exits_with_a_status_of_its_own_ends_the_kernel(student):
    kernel = student(EXIT_WITH)
    (leave_status,) = kernel.begin("leave_status")
    with lending.lending_copy(["leave_status"]):
        with pytest.raises(lending.CopyDied, match="exited with status 7"):
            leave_status(7)
    with pytest.raises(lending.LendingRefused, match="status 7 by itself.*kernel was ended"):
        trusted.end()
    kernel.process.wait(timeout=10)


# A cheating student side: the copy starts a process that outlives it (in the sandbox, a
# grandchild whose parent ends at once: re-parented to the sandbox's init).
START_PROCESS = """\
import time


def start(twice):
    if os.fork() == 0:
        if twice and os.fork() != 0:
            os._exit(0)
        time.sleep(60)
        os._exit(0)
"""


@pytest.mark.parametrize("sandboxed", [False, True], ids=["unsandboxed", "sandboxed"])
def test_a_process_started_by_the_copy_is_killed_and_ends_the_kernel(student, sandboxed):
    kernel = student(START_PROCESS, sandboxed=sandboxed)
    (start,) = kernel.begin("start")
    kernel_pid = SESSION.kernel_pid
    with lending.lending_copy(["start"]):
        start(sandboxed)
        time.sleep(0.2)
        started = lending.processes_beside(kernel_pid, {SESSION.copy.pid})
    assert started  # (sandboxed, the grandchild and its ended parent, not yet reaped)
    with pytest.raises(lending.LendingRefused, match=r"started processes of its own \(\d+ \("):
        trusted.end()
    kernel.process.wait(timeout=10)
    time.sleep(0.2)
    assert all(state(pid) in ("gone", "Z") for pid in started)


def test_no_copy_is_lent_to_while_the_kernel_has_another_process(student):
    kernel = student("import subprocess\nsleeper = subprocess.Popen(['sleep', '60'])\n")
    kernel.begin("Box")
    with pytest.raises(lending.LendingRefused, match=r"other processes running \(\d+ \(sleep\)"):
        with lending.lending_copy(["Box.double"]):
            pass
