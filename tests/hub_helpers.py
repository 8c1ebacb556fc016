"""Running commands as the hub's Unix users, and what a student types into a notebook."""

import contextlib
import html
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import nbformat

from autograder.grading.authoring.engine_sync import strip_solution_markers
from autograder.grading.authoring.hub.accounts import (
    Account,
    create_account,
    new_password,
    remove_account,
    require_root,
)
from autograder.grading.authoring.hub.proxy import node_missing
from autograder.grading.course import system_tools


def hub_unavailable_reason() -> str | None:
    """Why the hub tests cannot run here (not root, no useradd, no node), or None."""
    try:
        require_root()
    except RuntimeError as error:
        return system_tools.missing("root", str(error))
    missing_node = node_missing()
    return system_tools.missing("node", missing_node) if missing_node else None


def run_as(account: Account, python: Path, *command: str, cwd: Path, library: str = "", check=True):
    """``command`` as the Unix user, with only their environment's programs on PATH (and
    the LD_LIBRARY_PATH its python needs, if any)."""
    env = [f"LD_LIBRARY_PATH={library}"] * bool(library) + [
        f"HOME={account.home}", f"USER={account.name}", f"LOGNAME={account.name}",
        f"PATH={python.parent}:/usr/bin:/bin", "LANG=C.UTF-8", "JUPYTER_PREFER_ENV_PATH=1",
    ]  # fmt: skip
    done = subprocess.run(
        ["runuser", "-u", account.name, "--", "env", "-i", *env, *command],
        cwd=cwd, capture_output=True, text=True,
    )  # fmt: skip
    if check and done.returncode != 0:
        raise AssertionError(
            f"{account.name}: {' '.join(command)} failed ({done.returncode}):\n"
            f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done


# Run as a user: which of these paths they can open, list or write ({label: "allowed" or
# the error's name}).
PROBE = """
import json, os, sys
tries = json.loads(sys.argv[1])
found = {}
for label, (how, path) in tries.items():
    try:
        if how == "list":
            os.listdir(path)
        elif how == "read":
            open(path, "rb").read(1)
        elif how == "rename":
            os.rename(path, path + ".renamed")
        else:
            open(path, "ab").close()
        found[label] = "allowed"
    except OSError as error:
        found[label] = type(error).__name__
print(json.dumps(found))
"""


def probe(account: Account, python: Path, tries: dict, library: str = "") -> dict[str, str]:
    """What ``account`` may do with each path: ``tries`` is label -> (list|read|write|rename,
    path)."""
    payload = json.dumps({label: (how, str(path)) for label, (how, path) in tries.items()})
    done = run_as(
        account, python, str(python), "-I", "-c", PROBE, payload, cwd=Path("/"), library=library
    )
    return json.loads(done.stdout)


def type_in_reference(notebook_file: Path, solution_file: Path, owner: Account) -> None:
    """The student's fetched notebook with the reference typed into every answer cell."""
    notebook = nbformat.read(notebook_file, as_version=4)
    solution = nbformat.read(solution_file, as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for cell in notebook.cells:
        spec = cell.metadata.get("nbgrader", {})
        if spec.get("solution"):
            cell.source = strip_solution_markers(answers[spec["grade_id"]])
    nbformat.write(notebook, notebook_file)
    os.chown(notebook_file, owner.uid, owner.gid)


def feedback_score(page: Path) -> tuple[float, float]:
    """(score, out of) of a feedback page: its first 'Score: X / Y', the notebook's total."""
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    found = re.search(r"Score: ([\d.]+) / ([\d.]+)", text)
    assert found, f"no score in {page}"
    return float(found[1]), float(found[2])


@contextlib.contextmanager
def outsider(group: str) -> Iterator[Account]:
    """A Unix user of this machine outside the class (not in ``group``), removed afterwards."""
    name = f"ag-out-{group.rsplit('-', 1)[-1]}"
    try:
        yield create_account(name, new_password())
    finally:
        remove_account(name)


def entries(folder: Path) -> set[str]:
    """The names in ``folder``, read as root."""
    return {path.name for path in folder.iterdir()}
