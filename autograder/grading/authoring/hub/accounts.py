"""Unix accounts for a trial class: made with useradd, given a password, removed with userdel.

Names carry a short random suffix per run, so a run never takes over an account that exists
already, and each home is private (mode 0700): a student cannot read another's work.
"""

import grp
import os
import pwd
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


class AccountError(RuntimeError):
    """An account that could not be made or removed: one line for the command to print."""


@dataclass(frozen=True)
class Account:
    """One Unix user of the class and the password they log in to the hub with."""

    name: str
    password: str

    @property
    def home(self) -> Path:
        return Path(pwd.getpwnam(self.name).pw_dir)

    @property
    def uid(self) -> int:
        return pwd.getpwnam(self.name).pw_uid

    @property
    def gid(self) -> int:
        return pwd.getpwnam(self.name).pw_gid


def run_suffix() -> str:
    """Four random lowercase letters and digits: this run's accounts, told apart by name."""
    alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(4))


def new_password() -> str:
    """A password nobody else knows, short enough to type from the terminal."""
    return secrets.token_urlsafe(9)


def require_root() -> None:
    """Refuse, in one line, where accounts cannot be made (not root, or no useradd)."""
    if os.geteuid() != 0:
        raise AccountError(
            "the hub makes Unix accounts for the instructor and the students: run it as root "
            "(e.g. sudo make hub) on a machine you use for a local trial"
        )
    for tool in ("useradd", "userdel", "groupadd", "groupdel", "chpasswd", "runuser"):
        if not any(Path(folder, tool).exists() for folder in ("/usr/sbin", "/sbin", "/usr/bin")):
            raise AccountError(f"{tool} is not installed: the hub needs it to manage accounts")


def create_group(name: str) -> int:
    """A new Unix group ``name`` (the class: only its members may enter the exchange); its
    gid. Refuses an existing one."""
    try:
        grp.getgrnam(name)
    except KeyError:
        pass
    else:
        raise AccountError(f"a group named {name} exists already: not touching it")
    subprocess.run(["groupadd", name], check=True, capture_output=True, text=True)
    return grp.getgrnam(name).gr_gid


def remove_group(name: str) -> None:
    """Remove the group ``name`` (after its members' accounts)."""
    try:
        grp.getgrnam(name)
    except KeyError:
        return
    done = subprocess.run(["groupdel", name], capture_output=True, text=True)
    if done.returncode != 0:
        raise AccountError(f"groupdel {name} failed: {done.stderr.strip()}")


def refuse_existing_user(name: str) -> None:
    """Refuse, in one line, a user name that an account of this machine has already."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    raise AccountError(f"a user named {name} exists already: not touching it")


def create_account(name: str, password: str, groups: tuple[str, ...] = ()) -> Account:
    """A new Unix user ``name`` with a private home and ``password``, a member of ``groups``
    as well as their own; refuses an existing one."""
    refuse_existing_user(name)
    member_of = ["--groups", ",".join(groups)] if groups else []
    subprocess.run(
        ["useradd", "--create-home", "--shell", "/bin/bash", *member_of, name],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    account = Account(name, password)
    account.home.chmod(0o700)
    subprocess.run(
        ["chpasswd"], input=f"{name}:{password}\n", check=True, capture_output=True, text=True
    )
    return account


def processes_of(uid: int) -> list[int]:
    """The pids of every process running as ``uid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    found.append(int(entry.name))
            except OSError:
                continue  # ended meanwhile
    return found


def end_processes(uid: int, grace: float = 5.0) -> int:
    """Stop every process of the (per-run) user ``uid``, by pid: TERM, then KILL; the count."""
    pids = processes_of(uid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and processes_of(uid):
            time.sleep(0.1)
        pids = processes_of(uid)
        if not pids:
            break
    return len(pids)


def remove_account(name: str) -> None:
    """End the user's processes, then remove the user and their home (userdel -r)."""
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return
    end_processes(uid)
    done = subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
    # userdel warns (exit 12) when the mail spool was never made: the account is gone.
    if done.returncode not in (0, 12):
        raise AccountError(f"userdel {name} failed: {done.stderr.strip()}")
