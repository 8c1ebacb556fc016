"""A real JupyterLab server and a headless Chromium for the browser test.

The server runs on 127.0.0.1, on a free port, with token authentication, over a temporary
copy of the course, with its own Jupyter config, data, runtime and IPython folders so that
nothing in the user's home changes what it does. The kernel is this environment's Python
(JUPYTER_PREFER_ENV_PATH=1 puts .venv's kernelspec first).
"""

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grading.authoring.student_lab import lab_command, lab_environment
from autograder.grading.course import system_tools
from autograder.grading.course.repo_paths import REPO_ROOT

# Bounded waits (milliseconds): a kernel start imports torch; a run executes several cells.
PAGE_MS = 60_000
RUN_MS = 90_000

# Where the browser tests leave their screenshots (and a failing page's evidence).
SCREENSHOTS = REPO_ROOT / "build" / "screenshots"


# Chromium runs as root in CI (no sandbox possible there) and must not phone home: without
# the background-networking flags its connections are refused many at a time here.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
]

# JupyterLab settings for a deterministic page: every cell rendered in the DOM (no
# windowing) so the test can find cells by position. The news prompt is left to the student
# profile to switch off: the test checks that it does.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def browser_unavailable_reason() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (pip install -r requirements.lock)"
    if system_tools.chromium() is None:
        where = (
            system_tools.hidden_note("chromium")
            or f"no Chromium at {system_tools.chromium_wanted()}"
        )
        return system_tools.missing(
            "chromium", f"{where} (or set {system_tools.CHROMIUM_ENV} to a Chromium binary)"
        )
    return None


@contextlib.contextmanager
def chromium(test: str) -> Iterator[Any]:
    """Debian's headless Chromium for ``test`` (playwright), closed afterwards; where
    playwright or Chromium is missing the test is skipped, saying why."""
    import pytest

    reason = browser_unavailable_reason()
    if reason:
        print(f"{test} skipped: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(system_tools.chromium()), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    root: Path
    port: int
    token: str
    process: subprocess.Popen
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """A page of this server, with the token (which logs the browser in)."""
        separator = "&" if "?" in path else "?"
        return f"{self.base_url}/{path.lstrip('/')}{separator}token={self.token}"

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server log)"


def isolated_environment(home: Path) -> dict[str, str]:
    """This environment's programs and kernels; Jupyter and IPython state under ``home``."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    env["JUPYTER_PREFER_ENV_PATH"] = "1"
    for name, sub in [
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("IPYTHONDIR", "ipython"),
        ("MPLCONFIGDIR", "matplotlib"),
    ]:
        path = home / sub
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


def write_lab_settings(settings_dir: Path) -> None:
    for relative, values in LAB_SETTINGS.items():
        path = settings_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def copy_course(repo: Path, root: Path) -> Path:
    """An nbgrader course folder: the repo's config, solutions/ (source) and course/ (release)."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy2(repo / "nbgrader_config.py", root / "nbgrader_config.py")
    ignore = shutil.ignore_patterns(".*", "__pycache__")
    shutil.copytree(repo / "solutions", root / "solutions", ignore=ignore)
    shutil.copytree(repo / "course", root / "course", ignore=ignore)
    return root


def _wait_until_ready(server: LabServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    status_url = server.url("api/status")
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited with {server.process.returncode}:\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(status_url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise TimeoutError(f"jupyter lab not ready after {timeout:.0f} s:\n{server.log_tail()}")


@contextlib.contextmanager
def jupyter_lab(
    root: Path, state: Path, *, student: bool = False, timeout: float = 60
) -> Iterator[LabServer]:
    """Start ``jupyter lab`` on ``root`` (also its working folder) and stop it afterwards.

    ``student``: as ``make lab`` starts it (student profile, no forced matplotlib backend);
    otherwise as ``make formgrader`` does, with all of nbgrader's tools.
    """
    env = isolated_environment(state)
    if student:
        env = lab_environment(env)
    else:
        env.pop("MPLBACKEND", None)
    write_lab_settings(Path(env["JUPYTER_CONFIG_DIR"]) / "lab" / "user-settings")
    token = secrets.token_hex(16)
    log = state / "jupyter-lab.log"
    for _attempt in range(3):  # a free port can be taken between the probe and the bind
        port = free_port()
        options = [
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--LabApp.workspaces_dir={state / 'workspaces'}",
        ]
        command = lab_command(root, options) if student else instructor_command(root, options)
        with log.open("w") as log_file:
            process = subprocess.Popen(
                command, cwd=root, env=env, stdout=log_file, stderr=subprocess.STDOUT
            )
        server = LabServer(root, port, token, process, log)
        try:
            _wait_until_ready(server, timeout)
        except RuntimeError:
            stop(server)
            if "address already in use" in server.log_tail().lower():
                continue
            raise
        except BaseException:
            stop(server)
            raise
        try:
            yield server
        finally:
            stop(server)
        return
    raise RuntimeError(f"jupyter lab could not bind a free port:\n{server.log_tail()}")


def instructor_command(root: Path, options: list[str]) -> list[str]:
    """``jupyter lab`` with nbgrader's formgrader, as ``make formgrader`` starts it."""
    command = [str(Path(sys.executable).parent / "jupyter"), "lab", *options]
    command.append(f"--ServerApp.root_dir={root}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI containers run as root
    return command


def stop(server: LabServer, timeout: float = 15) -> None:
    """Stop the server (and, through it, its kernels); kill it if it does not stop in time."""
    process = server.process
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


# Driving a notebook page (playwright's sync API, imported where used: it may be absent).
def code_cell(page, text: str):
    """The code cell whose source contains ``text``."""
    return page.locator(".jp-Notebook .jp-CodeCell", has=page.locator(".cm-content", has_text=text))


# The whole document of a cell's editor. Its DOM holds only the lines in view (CodeMirror
# draws a long cell's visible part), so the text is read from the editor's state, through
# CodeMirror's link from its content element to its view (JupyterLab's older one second).
EDITOR_TEXT = """content => {
    const tile = content.cmTile;
    const view = (tile && tile.root && tile.root.view) || (content.cmView && content.cmView.view);
    return view ? view.state.doc.toString() : null;
}"""


def editor_text(editor) -> str:
    """What a cell's editor (its ``.cm-content`` element) holds, every line of it."""
    text = editor.evaluate(EDITOR_TEXT)
    if text is None:
        raise RuntimeError("cannot reach the cell's CodeMirror view from its DOM")
    return text


def replace_source(page, cell, source: str) -> None:
    """Type ``source`` into a cell's CodeMirror editor, replacing what is there, and read it
    back: a click that lands while a busy machine is still laying the notebook out loses the
    keys after it, and the old source would stay. The cell is held by its element, not by
    the text that ``cell`` may have been found by (which the typing replaces)."""
    editor = cell.element_handle().query_selector(".cm-content")
    for _ in range(3):
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
        page.keyboard.insert_text(source)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if editor_text(editor) == source:
                return
            time.sleep(0.2)
    raise AssertionError(f"the editor holds {editor_text(editor)!r} after typing {source!r}")


@contextlib.contextmanager
def evidence_on_failure(page, name: str, server: "LabServer | None" = None) -> Iterator[None]:
    """When the block fails: the whole page as a screenshot, every cell's text (source,
    prompt, outputs) and the server log's tail under build/screenshots/failed-NAME.*, named
    in the error, so that a failure seen once in CI says what the page showed."""
    try:
        yield
    except Exception as error:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        image, text = SCREENSHOTS / f"failed-{name}.png", SCREENSHOTS / f"failed-{name}.txt"
        try:
            page.screenshot(path=str(image), full_page=True)
            cells = page.locator(".jp-Notebook .jp-Cell").all_inner_texts()
            parts = [f"--- cell {i} ---\n{t}" for i, t in enumerate(cells)]
            if server is not None:
                parts.append(f"--- server log ---\n{server.log_tail()}")
            text.write_text("\n".join(parts) + "\n")
            error.add_note(f"the page when it failed: {image}, its cells: {text}")
            error.add_note("\n".join(parts)[-6000:])
        except Exception as unsaved:  # the page may be gone with the failure
            error.add_note(f"no evidence saved: {unsaved}")
        raise


def run_cell(page, cell) -> None:
    """Click into ``cell`` and run it with Shift+Enter, again if the keys were lost (a
    click that landed while the notebook was still laying itself out on a busy machine:
    the prompt is still "[ ]" seconds later, where a queued cell shows "[*]")."""
    prompt = cell.locator(".jp-InputPrompt")
    for _ in range(3):
        cell.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if prompt.inner_text().strip() not in ("[ ]:", ""):
                return
            time.sleep(0.2)


def wait_until_run(cell) -> None:
    """Wait until the cell has finished running (its prompt shows a number, not [*])."""
    from playwright.sync_api import expect

    expect(cell.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=RUN_MS)


def run_menu(page, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()
