"""Start JupyterHub for a class and stop it with everything it started."""

import contextlib
import errno
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.grading.authoring.hub.classroom import Classroom
from autograder.grading.authoring.hub.hub_config import (
    HubSettings,
    UserServer,
    write_hub_config,
)
from autograder.grading.authoring.hub.proxy import proxy_command

if TYPE_CHECKING:
    from autograder.grading.authoring.hub.lti import LtiPlatform


class HubError(RuntimeError):
    """The hub cannot start as asked: one line for the command to print."""


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_free(port: int) -> None:
    """Refuse a port that something on 127.0.0.1 holds already, saying so in one line."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise HubError(
                    f"port {port} on 127.0.0.1 is taken (another hub, or another server): "
                    "stop it or choose another port with --port"
                ) from None
            raise HubError(f"cannot listen on 127.0.0.1:{port}: {error.strerror}") from None


def hub_settings(
    room: Classroom, port: int, state: Path, lti: "LtiPlatform | None" = None
) -> HubSettings:
    """Who starts what: students the kit environment in their working folder with the
    student profile, the instructor the full environment on the course root."""
    teacher = UserServer(
        room.instructor_python.parents[1], room.course_root, library_path=room.library_path
    )
    users = {room.instructor.name: teacher}
    for student in room.students:
        work = room.work_folders[student.name]
        users[student.name] = UserServer(
            room.student_python.parents[1], work, room.student_profile, room.library_path
        )
    return HubSettings(state, port, free_port(), free_port(), proxy_command(), users, lti)


def _wait_ready(process: subprocess.Popen, url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
            raise HubError(f"jupyterhub exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{url}/hub/api", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise HubError(f"jupyterhub did not answer at {url} within {timeout:.0f} s (log: {log})")


@contextlib.contextmanager
def running_hub(
    room: Classroom, port: int, timeout: float = 90, lti: "LtiPlatform | None" = None
) -> Iterator[HubSettings]:
    """JupyterHub (and its proxy) for the class on 127.0.0.1:``port`` meanwhile; with
    ``lti``, signing in by launches from that LMS instead of passwords."""
    require_free(port)
    state = room.folder / ("hub-lti" if lti else "hub")
    state.mkdir(mode=0o700, exist_ok=True)
    settings = hub_settings(room, port, state, lti)
    config = write_hub_config(settings)
    log = state / "jupyterhub.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=state, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        _wait_ready(process, settings.url, log, timeout)
        yield settings
    finally:
        stop_hub(process, state / "proxy.pid")


def stop_hub(process: subprocess.Popen, proxy_pid: Path, grace: float = 30) -> None:
    """Stop the hub (it stops the users' servers and its proxy); kill what is left."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(proxy_pid.read_text().strip()), signal.SIGKILL)  # left by a killed hub
