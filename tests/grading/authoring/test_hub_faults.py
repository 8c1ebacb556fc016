"""``autograd-course hub`` refusing to start, in one line and exit status 2, with nothing of
it left running: a port another program holds, a machine without node or npm (both before
any account is made: these run as any user, and fast); and a class whose user name exists
already, refused without touching that user (as root).
"""

import grp
import os
import pwd
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grading.authoring.hub.accounts import (
    AccountError,
    create_account,
    new_password,
    remove_account,
    require_root,
    run_suffix,
)
from autograder.grading.authoring.hub.classroom import account_names, classroom, group_name
from autograder.grading.authoring.hub.launch import free_port
from autograder.grading.course import system_tools

COMMAND = Path(sys.executable).parent / "autograd-course"


def session_processes(session: int) -> list[int]:
    """The pids of the processes still in the session ``session`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        fields = stat.rpartition(")")[2].split()
        if int(fields[3]) == session:  # after the name: state, ppid, pgrp, session
            found.append(int(entry.name))
    return found


def refused_start(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``autograd-course hub ARGS`` in its own session;
    fails the test if anything it started is still running afterwards."""
    process = subprocess.Popen(
        [str(COMMAND), "hub", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    left = session_processes(process.pid)
    assert not left, f"processes of the refused hub left running: {left}"
    return process.returncode, out, err


def test_a_taken_port_is_refused_in_one_line():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", free_port()))
        holder.listen()
        port = holder.getsockname()[1]
        status, out, err = refused_start("--port", str(port), "--students", "1")
    assert status == 2, (status, out, err)
    assert err.strip().count("\n") == 0, err  # one line
    assert f"port {port} on 127.0.0.1 is taken" in err and "--port" in err, err
    assert "Traceback" not in out + err


def test_no_node_or_npm_is_refused_in_one_line(tmp_path):
    bare = tmp_path / "bin"  # a PATH with python and nothing else: no node, no npm
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(bare)}
    status, out, err = refused_start("--port", str(free_port()), env=env)
    assert status == 2, (status, out, err)
    assert err.strip().count("\n") == 0, err
    assert "node is not installed" in err and "apt-get install nodejs npm" in err, err
    assert "Traceback" not in out + err


def test_npm_alone_missing_is_named(tmp_path):
    node = system_tools.which("node")
    if node is None:
        pytest.skip(system_tools.missing("node", "no node on PATH: the npm-only case needs one"))
    bare = tmp_path / "bin"  # node, but not npm
    bare.mkdir()
    (bare / "node").symlink_to(node)
    env = {**os.environ, "PATH": str(bare)}
    status, out, err = refused_start("--port", str(free_port()), env=env)
    assert status == 2, (status, out, err)
    assert err.strip().count("\n") == 0, err
    assert "npm is not installed" in err, err


def test_a_class_whose_name_is_taken_keeps_the_existing_user(tmp_path):
    """A class whose student name an account of the machine has already: refused in one
    line; that account and its home kept; what the class had made before removed."""
    try:
        require_root()
    except AccountError as error:
        pytest.skip(system_tools.missing("root", str(error)))
    suffix = run_suffix()
    teacher, [taken] = account_names(1, suffix)
    existing = create_account(taken, new_password())
    work = existing.home / "my-work.txt"
    work.write_text("mine\n")
    try:
        with pytest.raises(AccountError, match=f"a user named {taken} exists already"):
            with classroom(1, [], log=lambda line: None, suffix=suffix):
                pass
        assert work.read_text() == "mine\n", "the existing user's home was touched"
        assert pwd.getpwnam(taken).pw_uid == existing.uid
        made_before = {teacher} & {user.pw_name for user in pwd.getpwall()}
        assert not made_before, f"the class's own accounts left behind: {made_before}"
        assert group_name(suffix) not in {group.gr_name for group in grp.getgrall()}
    finally:
        remove_account(taken)
