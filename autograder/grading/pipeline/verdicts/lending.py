"""The trusted side's copies of the student's kernel: where the reference's parts are lent.

A check that lends the reference's version of a notebook's other exercises
(``autograder.checks.given``) must not lend them to the student's kernel itself: code the
check calls could keep them (or their source) and install them later as its own answers.
So the trusted side asks the kernel for a copy (``serve.serve_copy``: a fork that closes
every file descriptor and connects anew), lends only to the copy, and ends the copy when
the test cell ends; what the copy was lent, and every object made there, dies with it (a
proxy of one raises ReferenceError afterwards).

The student's side is not trusted to have done that, so before anything is lent this side
checks the copy from outside: its connection's peer (SO_PEERCRED) is a child of the kernel
and not the kernel; it may open nothing more (RLIMIT_NOFILE set to 0: no new file, socket,
pipe or duplicate); it holds no file descriptor but its connection to this side (checked by
the socket's peer inode, through sock_diag) and /dev/null, so no pipe, socket, file, memfd
or eventfd leads back to the kernel; and no shared mapping of memory. The kernel is stopped
(SIGSTOP) while its copy lives: none of its threads runs meanwhile (to read the copy's
memory, say). A copy that fails a check is killed and the check fails with the reason.

The kernel and everything it starts run under the grading kernel's system-call filter
(``syscall_filter``, installed by its launcher and checked on the copy from outside): no
ptrace, process_vm_writev or pidfd_getfd into the stopped kernel, no new namespace to hide
a process in. No other process of the kernel's may run when a copy is made (one could be
given what the copy was lent): lending is refused.

When the copy is killed, the trusted side looks again before the kernel goes on: the
kernel must not have run (its threads' context switches) nor have signals pending; the
copy must have ended by this side's SIGKILL (an exit status of its own is read by the
kernel when it reaps the copy: an honest copy kills itself the same way); no process the
copy started may be left (killed, whatever it is); and the file system's names and
metadata, which a copy can change by path without a file descriptor, must be as they were
(``copy_traces``). Otherwise the kernel is ended too (SIGKILL: the notebook grades as a
dead kernel), as it may hold what the copy passed on.

What this cannot close unsandboxed: the copy's processes are found as the kernel's
descendants (one whose parent ended is lost to the host's init), where the kernel runs as
root the copy may raise its own limit back, and the file system is not compared.
"""

import os
import resource
import select
import signal
import socket
import stat
import struct
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from autograder.grading.pipeline.verdicts import copy_traces
from autograder.grading.pipeline.verdicts.proxy import SESSION, handle_callback
from autograder.kernel import syscall_filter
from autograder.kernel.channel import Channel
from autograder.kernel.wire import ChannelBroken

# A file to append one JSON line to per copy (its descriptors, shared mappings and the
# seconds it took to start and to end): for measuring, never needed to grade.
TRACE_ENV = "AUTOGRADER_LENDING_TRACE"
COPY_WAIT = 20.0  # seconds for the copy to connect
PARENT_WAIT = 10.0  # seconds for the kernel to say its copy ended, once killed


class LendingRefused(RuntimeError):
    """The kernel's copy is not one the reference's parts may be lent to: the check fails."""


class CopyDied(ChannelBroken):
    """The copy of the student's kernel ended in the middle of a check."""


def peer_pid(sock: socket.socket) -> int:
    """The pid of the process that connected ``sock`` (its credentials, from the kernel)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[0]


def stat_fields(pid: int) -> list[str]:
    """``/proc/PID/stat``'s fields after the command name (state first): the name is read
    to its last ')', whatever spaces or parentheses it holds."""
    with open(f"/proc/{pid}/stat", "rb") as stat_file:
        text = stat_file.read().decode("ascii", "replace")
    return text[text.rindex(")") + 2 :].split()


def parent_pid(pid: int) -> int:
    """The pid of ``pid``'s parent (0 when ``pid`` is gone)."""
    try:
        return int(stat_fields(pid)[1])
    except (OSError, ValueError, IndexError):
        return 0


def exit_code(pid: int) -> int | None:
    """The wait status of the ended process ``pid`` while it is a zombie (field 52 of
    /proc/PID/stat), else None."""
    with suppress(OSError, ValueError, IndexError):
        fields = stat_fields(pid)
        if fields[0] == "Z":
            return int(fields[49])
    return None


def exit_text(pid: int, reported: list | None = None) -> str:
    """How the ended copy ``pid`` ended, from its exit code while it is a zombie, else
    from what its kernel reported."""
    code = exit_code(pid)
    if code is None and type(reported) is list and len(reported) == 2:
        status, number = reported
        code = (number & 0x7F) if number else (status & 0xFF) << 8
    if code is None:
        return "ended"
    if code & 0x7F:
        number = code & 0x7F
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown"
        guess = ": out of memory?" if number == signal.SIGKILL else ""
        return f"died (signal {number}, {name}){guess}"
    return f"exited with status {code >> 8}"


def _pid_namespace(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/pid")


def processes_beside(kernel: int, allowed: set[int]) -> list[int]:
    """The processes of the kernel's sandbox but the kernel, ``allowed`` and the sandbox's
    init: every other process in the kernel's own pid namespace (the filter keeps them
    from making another); unsandboxed, the kernel's other descendants."""
    namespace = _pid_namespace(kernel)  # read once: compared with every process's
    sandboxed = namespace != _pid_namespace(os.getpid())
    skipped = {kernel, *allowed, parent_pid(kernel) if sandboxed else kernel}
    found, parents = [], {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        pid = int(name)
        with suppress(OSError, ValueError, IndexError):
            if not sandboxed:
                parents[pid] = int(stat_fields(pid)[1])
            elif pid not in skipped and _pid_namespace(pid) == namespace:
                found.append(pid)
    for pid, parent in parents.items():
        seen = set()
        while parent not in (0, 1, kernel) and parent not in seen:
            seen.add(parent)
            parent = parents.get(parent, 0)
        if parent == kernel and pid not in skipped:
            found.append(pid)
    return sorted(found)


def process_names(pids: list[int]) -> str:
    """``pids`` in words: pid and command name each, at most three."""
    named = []
    for pid in pids[:3]:
        try:
            with open(f"/proc/{pid}/comm") as comm:
                named.append(f"{pid} ({comm.read().strip()})")
        except OSError:
            named.append(f"{pid} (ended)")
    return ", ".join(named) + (f" and {len(pids) - 3} more" if len(pids) > 3 else "")


def socket_inode(target: str) -> int | None:
    """The inode of a ``socket:[INODE]`` link target, else None."""
    if target.startswith("socket:[") and target.endswith("]"):
        return int(target[8:-1])
    return None


_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_UDIAG_SHOW_PEER = 4
_UNIX_DIAG_PEER = 2


def unix_peer_inode(sock: socket.socket) -> int | None:
    """The inode of the socket at the other end of the Unix socket ``sock`` (sock_diag);
    None where the kernel cannot say (no unix_diag)."""
    inode = os.fstat(sock.fileno()).st_ino
    request = struct.pack("=BBHIII2I", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, inode, _UDIAG_SHOW_PEER,
                          0xFFFFFFFF, 0xFFFFFFFF)  # fmt: skip
    header = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, 1, 1, 0)
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as diag:
            diag.settimeout(2)
            diag.sendto(header + request, (0, 0))
            answer = diag.recv(65536)
    except OSError:
        return None
    length, kind = struct.unpack_from("=IH", answer)
    if kind != _SOCK_DIAG_BY_FAMILY or len(answer) < 32:
        return None
    offset = 16 + 16  # nlmsghdr, unix_diag_msg
    while offset + 4 <= min(length, len(answer)):
        size, attribute = struct.unpack_from("=HH", answer, offset)
        if size < 4:
            break
        if attribute == _UNIX_DIAG_PEER and size >= 8:
            return struct.unpack_from("=I", answer, offset + 4)[0]
        offset += (size + 3) & ~3
    return None


def _what(target: str, path: str) -> str:
    """A file descriptor's kind, in words, from its link target."""
    if target.startswith("pipe:"):
        return "a pipe"
    if target.startswith("socket:"):
        return "a socket"
    if target.startswith("anon_inode:"):
        return f"an {target[11:].strip('[]')} descriptor"
    if target.startswith("/memfd:"):
        return "a memfd"
    return f"a file ({target})"


def check_descriptors(pid: int, channel_inode: int | None) -> None:
    """Refuse unless ``pid`` holds only its connection to this side and /dev/null."""
    null = os.stat(os.devnull).st_rdev
    folder = f"/proc/{pid}/fd"
    sockets = []
    for name in sorted(os.listdir(folder), key=int):
        path = f"{folder}/{name}"
        try:
            target = os.readlink(path)
            info = os.stat(path)
        except FileNotFoundError:
            continue  # closed meanwhile
        if socket_inode(target) is not None:
            sockets.append((int(name), socket_inode(target)))
            continue
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == null:
            continue
        raise LendingRefused(
            f"the kernel's copy held {_what(target, path)} (fd {name}) opened by your code "
            "or left open: lending refused"
        )
    extra = [fd for fd, inode in sockets if channel_inode is not None and inode != channel_inode]
    if len(sockets) != 1 or extra:
        fd = (extra or [fd for fd, _ in sockets[1:]] or ["none"])[0]
        raise LendingRefused(
            f"the kernel's copy held a socket other than its connection (fd {fd}), or "
            f"{len(sockets)} sockets: lending refused"
        )


# Read-only shared mappings of the system's files are common (glibc maps its gconv cache so);
# they lead nowhere, as these folders are read-only in the sandbox.
SYSTEM_FILES = ("/usr/", "/lib/", "/lib64/", "/etc/")


def check_mappings(pid: int) -> None:
    """Refuse if ``pid`` shares memory with another process (a way back to the kernel): a
    shared mapping that is writable, or of anything but a system file."""
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) < 2 or fields[1][3:4] != "s":
                continue
            where = fields[5].strip() if len(fields) > 5 else "anonymous memory"
            if "w" in fields[1] or not where.startswith(SYSTEM_FILES):
                raise LendingRefused(
                    f"the kernel's copy shares memory with the kernel ({fields[1]} mapping "
                    f"of {where} at {fields[0]}): lending refused"
                )


def _signal(pidfd: int | None, number: int) -> None:
    if pidfd is not None:
        with suppress(ProcessLookupError, OSError):
            signal.pidfd_send_signal(pidfd, number)


def _threads(pid: int) -> list[int]:
    """The thread ids of ``pid`` (each also has its own /proc/TID folder)."""
    return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]


def _until_stopped(pid: int, wait: float = 2.0) -> None:
    """Wait until every thread of ``pid`` is stopped or ended (a signal takes effect a
    moment later, thread by thread)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            if all(stat_fields(tid)[0] in "TtZ" for tid in _threads(pid)):
                return
        except FileNotFoundError:
            return  # gone
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.001)


def runs_and_signals(pid: int) -> tuple[int, int]:
    """How often ``pid``'s threads were scheduled so far (context switches, all threads), and
    the signals pending for it (a bit mask; SIGCHLD left out: its copies end)."""
    switches = pending = 0
    for tid in _threads(pid):
        with suppress(OSError), open(f"/proc/{tid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                    switches += int(value)
                elif key in ("SigPnd", "ShdPnd"):
                    pending |= int(value, 16)
    return switches, pending & ~(1 << (signal.SIGCHLD - 1))


def _ended(pidfd: int, timeout: float) -> bool:
    """Whether the process of ``pidfd`` has ended, waiting at most ``timeout`` seconds."""
    readable, _, _ = select.select([pidfd], [], [], timeout)
    return bool(readable)


@dataclass
class Copy:
    """One copy of the student's kernel, serving the rest of a test cell."""

    pid: int
    pidfd: int | None  # set once the copy is verified: only then is it ever signalled
    sock: socket.socket
    parent: Channel  # the kernel's own connection, waiting for the copy to end
    kernel_pidfd: int | None
    known: set[int]  # the student objects this side knew of before the copy
    lent: set[str] = field(default_factory=set)
    stopped: bool = False
    files: dict | None = None  # the sandbox's writable folders when the copy started
    kernel_runs: tuple[int, int] | None = None  # the stopped kernel's runs_and_signals
    beside: set[int] | None = None  # the kernel's other processes when the copy started
    started: float = field(default_factory=time.perf_counter)
    trace: dict = field(default_factory=dict)

    def death(self, wait: float = 0.0) -> str:
        """How the copy ended ("" while it runs, ``wait`` seconds at most)."""
        if self.pidfd is None or not _ended(self.pidfd, wait):
            return ""
        return f"the copy of your kernel {exit_text(self.pid)}"


class CopyChannel(Channel):
    """The copy's connection: a failure once the copy has died says how it died."""

    def __init__(self, copy: Copy, timeout: float | None) -> None:
        super().__init__(copy.sock, handle_callback, timeout)
        self.copy = copy

    def request(self, message: dict, segments: list[bytes]) -> tuple[dict, list[bytes]]:
        try:
            return super().request(message, segments)
        except ChannelBroken as error:
            death = self.copy.death(wait=1.0)  # a closed connection: is it ending?
            if death:
                raise CopyDied(f"{death} while it was being checked") from None
            raise error


def _open_pidfd(pid: int) -> int | None:
    with suppress(OSError):
        return os.pidfd_open(pid)
    return None


def start_copy() -> Copy:
    """Ask the kernel for a copy, check it from outside and serve the cell from it."""
    parent = SESSION.channel
    if parent is None:
        raise ChannelBroken("no student kernel is connected (the test has no verdict)")
    known = SESSION.references()
    parent.send_call({"op": "fork"})
    listener = SESSION.listener
    if listener is None:
        raise ChannelBroken("the trusted side is not listening (no copy can connect)")
    listener.settimeout(COPY_WAIT)
    try:
        sock, _ = listener.accept()
    except TimeoutError:
        parent.close("the kernel made no copy")
        raise LendingRefused(
            f"your kernel did not make a copy within {COPY_WAIT:g} s to lend the reference's "
            "other exercises to: lending refused"
        ) from None
    sock.settimeout(None)
    pid = peer_pid(sock)
    kernel_pidfd = _open_pidfd(SESSION.kernel_pid) if SESSION.kernel_pid else None
    copy = Copy(pid, None, sock, parent, kernel_pidfd, known)
    SESSION.copy = copy
    try:
        pidfd = _open_pidfd(pid) if pid != SESSION.kernel_pid else None
        # Only a verified copy is ever signalled: a child of the kernel, alive when its
        # pidfd was taken (so the pid was not reused meanwhile).
        if pidfd is None or parent_pid(pid) != SESSION.kernel_pid or _ended(pidfd, 0):
            if pidfd is not None:
                os.close(pidfd)
            raise LendingRefused(
                "what connected to lend the reference's other exercises to is not a copy of "
                "your kernel: lending refused"
            )
        copy.pidfd = pidfd
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (0, 0))
        copy.beside = set(processes_beside(SESSION.kernel_pid, {pid}))
        if not syscall_filter.filter_active(pid):
            raise LendingRefused(
                "the kernel's copy runs without the grading kernel's system-call filter: "
                "lending refused"
            )
        if copy.beside:
            named = process_names(sorted(copy.beside))
            raise LendingRefused(
                f"your kernel has other processes running ({named}): they could be handed "
                "what a copy is lent, so lending refused"
            )
        _signal(kernel_pidfd, signal.SIGSTOP)
        copy.stopped = kernel_pidfd is not None
        _until_stopped(SESSION.kernel_pid)
        if copy.stopped:
            copy.kernel_runs = runs_and_signals(SESSION.kernel_pid)
        if os.environ.get(TRACE_ENV):
            copy.trace = _seen(pid)
        check_descriptors(pid, unix_peer_inode(sock))
        check_mappings(pid)
        try:
            copy.files = copy_traces.snapshot(SESSION.kernel_pid)
        except (OSError, copy_traces.TooManyEntries) as error:
            raise LendingRefused(
                f"the folders your kernel may write could not be read ({error}): lending refused"
            ) from None
    except BaseException as error:
        copy.trace["refused"] = str(error)
        end_copy()
        raise
    copy.trace["start_seconds"] = time.perf_counter() - copy.started
    SESSION.channel = CopyChannel(copy, parent.timeout)
    return copy


def end_copy() -> str:
    """Kill the current copy (if any), let the kernel go on and forget what the copy made;
    how the copy ended, in words ("" when there was none). A copy that left anything in the
    folders the kernel may write ends the kernel too (LendingRefused says what it left)."""
    copy, SESSION.copy = SESSION.copy, None
    if copy is None:
        return ""
    how = left = ""
    try:
        # Stopped first, so that it starts nothing more while its processes are found.
        _signal(copy.pidfd, signal.SIGSTOP)
        _until_stopped(copy.pid, 1.0)
        started = []
        if copy.beside is not None:  # (a copy refused before: nothing was lent to it)
            started = processes_beside(SESSION.kernel_pid, {copy.pid, *copy.beside})
        started_names = process_names(started) if started else ""
        for pid in started:
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _signal(copy.pidfd, signal.SIGKILL)
        if copy.pidfd is not None:
            _ended(copy.pidfd, 5.0)
            how = exit_text(copy.pid).replace(": out of memory?", " at the end of its cell")
        with suppress(OSError):
            copy.sock.close()
        left = _left_behind(copy, started_names)
        if left:
            if copy.kernel_pidfd is None:
                with suppress(OSError):
                    os.kill(SESSION.kernel_pid, signal.SIGKILL)
            _signal(copy.kernel_pidfd, signal.SIGKILL)
            copy.stopped = False  # never to run again: it could read what was left
    finally:
        if copy.stopped:
            _signal(copy.kernel_pidfd, signal.SIGCONT)
        for fd in (copy.pidfd, copy.kernel_pidfd):
            if fd is not None:
                with suppress(OSError):
                    os.close(fd)
        SESSION.channel = copy.parent
        SESSION.forget(SESSION.references() - copy.known)
        ending = time.perf_counter()
        with suppress(ChannelBroken):
            copy.parent.reply(0.1 if left else PARENT_WAIT)  # its copy ended: it goes on
        _write_trace(copy, left or how, time.perf_counter() - ending)
    if left:
        raise LendingRefused(left)
    return how


def _left_behind(copy: Copy, started: str) -> str:
    """How the ended ``copy`` reached back to its kernel, in words ("": it did not): it
    ended with a status of its own, it ``started`` processes (named), the stopped kernel
    ran or was signalled meanwhile, or the folders it may write changed."""
    said = [f"the copy started processes of its own ({started})"] if started else []
    code = exit_code(copy.pid)
    if code is not None and code != signal.SIGKILL:
        said.append(f"the copy {exit_text(copy.pid)} by itself, which your kernel reads")
    if copy.kernel_runs is not None:
        switches, pending = runs_and_signals(SESSION.kernel_pid)
        if switches != copy.kernel_runs[0]:
            said.append("your kernel ran while it was stopped (was it sent SIGCONT?)")
        if pending & ~copy.kernel_runs[1]:
            said.append(f"signals were sent to your kernel (pending: {pending:#x})")
    if copy.files is not None:
        try:
            after = copy_traces.snapshot(SESSION.kernel_pid) or {}
            said += copy_traces.changes(copy.files, after)
        except (OSError, copy_traces.TooManyEntries) as error:
            said.append(f"its folders could not be compared ({error})")
    if not said:
        return ""
    return (
        "the copy of your kernel that the reference's other exercises were lent to reached "
        f"back to your kernel or the folders it may write ({'; '.join(said)}): your kernel "
        "was ended, so that nothing the copy passed on is ever used"
    )


def _seen(pid: int) -> dict:
    """What a copy holds, as this side sees it: its descriptors and shared mappings."""
    folder = f"/proc/{pid}/fd"
    descriptors = {}
    for name in os.listdir(folder):
        with suppress(OSError):
            descriptors[name] = os.readlink(f"{folder}/{name}")
    with open(f"/proc/{pid}/maps") as maps:
        shared = [line.strip() for line in maps if line.split()[1][3:4] == "s"]
    return {"pid": pid, "descriptors": descriptors, "shared": shared}


def _write_trace(copy: Copy, how: str, end_seconds: float) -> None:
    path = os.environ.get(TRACE_ENV)
    if path:
        import json

        record = {**copy.trace, "ended": how, "end_seconds": end_seconds}
        record["lived_seconds"] = time.perf_counter() - copy.started
        with suppress(OSError), open(path, "a") as trace:
            trace.write(json.dumps(record) + "\n")


@contextmanager
def lending_copy(lent: Iterable[str], checked: Iterable[str] = ()) -> Iterator[None]:
    """Inside the block the trusted side talks to a copy of the kernel (started on the
    cell's first lending; a fresh one when a part checked here was lent to the current
    copy), which serves until the test cell ends."""
    checked = set(checked)
    if SESSION.copy is not None and SESSION.copy.lent & checked:
        end_copy()
    copy = SESSION.copy if SESSION.copy is not None else start_copy()
    copy.lent |= set(lent)
    yield
