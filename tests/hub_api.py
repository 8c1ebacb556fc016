"""A user's side of JupyterHub's REST API, with a token the hub's own command makes: start
and stop their server, save and read a notebook through the server's contents API."""

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from autograder.grading.authoring.hub.accounts import processes_of
from autograder.grading.authoring.hub.hub_config import HubSettings


def user_token(settings: HubSettings, name: str) -> str:
    """A new API token of the user ``name`` (``jupyterhub token``, on the hub's database)."""
    done = subprocess.run(
        [sys.executable, "-m", "jupyterhub", "token", "-f",
         str(settings.state / "jupyterhub_config.py"), name],
        cwd=settings.state, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def call(url: str, token: str, method: str = "GET", body: dict | None = None):
    """(status, decoded JSON or None) of one API request with the token."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method,
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read()
        return response.status, (json.loads(text) if text else None)


def server_state(hub_url: str, name: str, token: str) -> dict | None:
    """The user's default server as the hub reports it, or None when it has none."""
    _, user = call(f"{hub_url}/hub/api/users/{name}", token)
    return user["servers"].get("")


def start_server(hub_url: str, name: str, token: str, timeout: float = 180) -> None:
    """Ask the hub to start the user's server and wait until it is ready."""
    call(f"{hub_url}/hub/api/users/{name}/server", token, "POST", {})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = server_state(hub_url, name, token)
        if state and state.get("ready"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"the server of {name} was not ready within {timeout:.0f} s")


def stop_server(hub_url: str, name: str, token: str, timeout: float = 60) -> None:
    """Ask the hub to stop the user's server (if any) and wait until it has none."""
    try:
        call(f"{hub_url}/hub/api/users/{name}/server", token, "DELETE")
    except urllib.error.HTTPError as error:
        if error.code != 400:  # 400: no server running
            raise
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server_state(hub_url, name, token) is None:
            return
        time.sleep(0.5)
    raise TimeoutError(f"the server of {name} did not stop within {timeout:.0f} s")


def server_processes(uid: int) -> list[int]:
    """The pids of the user's single-user servers (their command line names the module)."""
    found = []
    for pid in processes_of(uid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"jupyterhub.singleuser" in command:
            found.append(pid)
    return found
