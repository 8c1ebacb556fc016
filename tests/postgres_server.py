"""A throwaway PostgreSQL server for tests: Debian's binaries, a data folder in a fresh temp
folder, a unix socket there and no TCP port, stopped and removed afterwards.

PostgreSQL refuses to run as root, so as root its programs run as the ``postgres`` user
through ``runuser``. Where the binaries (or that user) are missing, the tests that need the
server are skipped with the reason (``.ci/run`` installs Debian's ``postgresql`` package).
"""

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.grading.course import system_tools

SERVER_USER = "postgres"  # the OS user the server runs as when the tests run as root
START_TIMEOUT = 60  # seconds for pg_ctl -w to see the server accept connections


@dataclass(frozen=True)
class PostgresServer:
    """A running test server: ``url(name)`` is a psycopg URL to its database ``name``."""

    socket_dir: Path
    run_as: list[str]  # prefix that runs a server program as the server's user
    bindir: Path

    def url(self, database: str) -> str:
        """The SQLAlchemy URL of ``database`` on this server, over its unix socket."""
        return f"postgresql+psycopg://{SERVER_USER}@/{database}?host={self.socket_dir}"

    def create_database(self, prefix: str = "gradebook") -> str:
        """A new empty database; its URL."""
        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        command = [str(self.bindir / "createdb"), "-h", str(self.socket_dir), "-U", SERVER_USER]
        subprocess.run([*self.run_as, *command, name], check=True, capture_output=True)
        return self.url(name)


def why_not_available() -> str | None:
    """Why no test server can be started here (None: it can)."""
    if system_tools.postgres_binaries() is None:
        why = system_tools.hidden_note("postgres") or "initdb and pg_ctl are not installed"
        return system_tools.missing("postgres", why)
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return system_tools.missing(
                "postgres", "running as root, and runuser is missing to start it as another user"
            )
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return system_tools.missing(
                "postgres", f"running as root, and there is no {SERVER_USER!r} user to run it as"
            )
    return None


def _give_to_server_user(path: Path) -> None:
    """Hand ``path`` to the server's user (as root); no-op when the tests are not root."""
    if os.geteuid() == 0:
        user = pwd.getpwnam(SERVER_USER)
        os.chown(path, user.pw_uid, user.pw_gid)


def start_server(folder: Path) -> PostgresServer:
    """initdb and start a server whose data and socket are under ``folder``."""
    bindir = system_tools.postgres_binaries()
    run_as = ["runuser", "-u", SERVER_USER, "--"] if os.geteuid() == 0 else []
    # The server's user must reach the folder (pytest's own temp folders are root-only).
    folder.chmod(0o755)
    data, sockets = folder / "data", folder / "socket"
    for path in (data, sockets):
        path.mkdir(mode=0o700)
        _give_to_server_user(path)
    log = sockets / "server.log"

    def run(*command: str) -> None:
        result = subprocess.run([*run_as, *command], capture_output=True, text=True)
        if result.returncode != 0:
            logged = log.read_text(errors="replace") if log.is_file() else ""
            raise RuntimeError(f"{command[0]} failed:\n{result.stdout}{result.stderr}{logged}")

    run(str(bindir / "initdb"), "-D", str(data), "-U", SERVER_USER, "-A", "trust", "--no-sync")
    # listen_addresses='': no TCP at all; the only way in is the socket in our folder.
    options = f"-c listen_addresses='' -k {sockets} -c fsync=off"
    run(
        str(bindir / "pg_ctl"),
        "-D",
        str(data),
        "-o",
        options,
        "-l",
        str(log),
        "-w",
        "-t",
        str(START_TIMEOUT),
        "start",
    )
    return PostgresServer(sockets, run_as, bindir)


def stop_server(server: PostgresServer, folder: Path) -> None:
    """Stop the server (fast, it holds only test data) and remove its folder."""
    command = [str(server.bindir / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate"]
    subprocess.run([*server.run_as, *command, "-w", "stop"], capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for this test session, or the test skipped with the reason."""
    reason = why_not_available()
    if reason is not None:
        pytest.skip(f"no PostgreSQL test server: {reason}")
    folder = Path(tempfile.mkdtemp(prefix="pgtest-"))
    try:
        server = start_server(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield server
    finally:
        stop_server(server, folder)
