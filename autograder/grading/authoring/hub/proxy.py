"""JupyterHub's proxy, configurable-http-proxy, installed from the npm registry into a
project-local, git-ignored folder on first use (node and npm must be installed)."""

import subprocess
from pathlib import Path

from autograder.grading.course import system_tools
from autograder.grading.course.repo_paths import REPO_ROOT

PROXY_PACKAGE = "configurable-http-proxy"
PROXY_VERSION = "5.3.0"
NODE_FOLDER = REPO_ROOT / "build" / "hub-node"


class ProxyError(RuntimeError):
    """The proxy cannot be installed or found here: one line saying what to install."""


def node_missing() -> str | None:
    """Why the proxy cannot run here (no node or no npm), or None when it can."""
    for tool in ("node", "npm"):
        if system_tools.which(tool, "node") is None:
            return (
                f"{tool} is not installed: JupyterHub's proxy ({PROXY_PACKAGE}) runs on "
                "Node.js (Debian: apt-get install nodejs npm)"
            )
    return None


def proxy_command(folder: Path = NODE_FOLDER) -> Path:
    """The proxy's executable, installed with npm into ``folder`` unless it is there."""
    missing = node_missing()
    if missing:
        raise ProxyError(missing)
    executable = folder / "node_modules" / ".bin" / PROXY_PACKAGE
    if executable.exists():
        return executable
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund",
         "--loglevel=error", f"{PROXY_PACKAGE}@{PROXY_VERSION}"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0 or not executable.exists():
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ProxyError(f"npm could not install {PROXY_PACKAGE}@{PROXY_VERSION}: {last}")
    return executable
