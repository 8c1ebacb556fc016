"""The grading kernel's system-call filter: no way into another process's memory, no new
namespace, installed by the kernel's launcher before any notebook code and inherited by
every process the kernel starts (its lending copies included); nothing can remove it.

A lending copy of the kernel holds the reference's other exercises while the kernel is
stopped; without this filter the copy could write them into the stopped kernel's memory
(``ptrace``, ``process_vm_writev``), take the kernel's descriptors (``pidfd_getfd``), or
hide a process of its own from the trusted side in a new pid namespace. No honest notebook
makes these calls. The trusted side checks from outside, before lending, that the copy
runs under a filter (``filter_active``): the launcher's is the first, so a copy that has
one has this one.

Plain standard library: the kernel's launcher loads this file by its path (the kernel
imports nothing of the grading wing), and the trusted side imports it as a module.
"""

import ctypes
import errno
import platform
import struct

# seccomp's classic BPF: a program over ``struct seccomp_data`` (nr, arch, ip, args[6]).
_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JUMP_ANY_BIT = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in seccomp_data (args[0]'s low word: little-endian)
ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
X32_BIT = 0x40000000  # x86_64's x32 system calls: their own numbers, refused alike

# Namespace flags of clone (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET).
NEW_NAMESPACES = 0x7E020000

# Per machine: the audit arch, then the numbers of ptrace, process_vm_readv,
# process_vm_writev, kcmp, pidfd_getfd, process_madvise, unshare, setns; clone; clone3.
_TABLES = {
    "x86_64": (0xC000003E, (101, 310, 311, 312, 438, 440, 272, 308), 56, 435),
    "aarch64": (0xC00000B7, (117, 270, 271, 272, 438, 440, 97, 268), 220, 435),
}


class FilterUnavailable(OSError):
    """This machine or kernel cannot run the filter: the grading kernel must not start."""


def program(machine: str | None = None) -> bytes:
    """The filter as ``struct sock_filter`` entries for ``machine`` (this one by default):
    refused calls fail with EPERM, clone3 with ENOSYS (the C library then uses clone, whose
    flags a filter can read), clone asking for a namespace with EPERM, calls of another
    architecture (x86's 32-bit entry) with EPERM."""
    machine = machine or platform.machine()
    if machine not in _TABLES:
        raise FilterUnavailable(f"no system-call filter for this machine ({machine})")
    arch, refused, clone, clone3 = _TABLES[machine]
    # Each step: (code, jump-if-true label, jump-if-false label, constant); labels resolve
    # to the returns at the end (None: the next step).
    steps = [(_LOAD_WORD, None, None, _ARCH), (_JUMP_EQUAL, None, "deny", arch)]
    steps.append((_LOAD_WORD, None, None, _NR))
    if machine == "x86_64":
        steps.append((_JUMP_AT_LEAST, "deny", None, X32_BIT))
    steps += [(_JUMP_EQUAL, "deny", None, number) for number in refused]
    steps.append((_JUMP_EQUAL, "nosys", None, clone3))
    steps.append((_JUMP_EQUAL, None, "allow", clone))
    steps.append((_LOAD_WORD, None, None, _ARG0))
    steps.append((_JUMP_ANY_BIT, "deny", "allow", NEW_NAMESPACES))
    returns = {"allow": ALLOW, "deny": _ERRNO | errno.EPERM, "nosys": _ERRNO | errno.ENOSYS}
    at = {label: len(steps) + index for index, label in enumerate(returns)}

    def offset(label: str | None, index: int) -> int:
        return 0 if label is None else at[label] - index - 1

    code = b"".join(
        struct.pack("=HBBI", op, offset(yes, i), offset(no, i), k)
        for i, (op, yes, no, k) in enumerate(steps)
    )
    return code + b"".join(struct.pack("=HBBI", _RETURN, 0, 0, value) for value in returns.values())


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> None:
    """Install the filter on this thread (the launcher calls it before any other thread
    exists, so every thread and child gets it); FilterUnavailable where it cannot."""
    code = program()
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    # PR_SET_NO_NEW_PRIVS (38) first: without privileges, only then may a filter be set.
    if libc.prctl(38, 1, 0, 0, 0) != 0:
        raise FilterUnavailable(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
    # PR_SET_SECCOMP (22), SECCOMP_MODE_FILTER (2).
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise FilterUnavailable(ctypes.get_errno(), "the system-call filter was refused")


def filter_active(pid: int) -> bool:
    """Whether process ``pid`` runs under a system-call filter with no new privileges, as
    its /proc status says (seen from outside: the process cannot answer for itself)."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields.get("Seccomp") == "2" and fields.get("NoNewPrivs") == "1"
