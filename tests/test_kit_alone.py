"""Does the student kit work alone? A fresh virtual environment holds the kit's wheel and the
third-party packages it needs (numpy, torch, matplotlib, IPython and the kernel), nothing of
the course's repository, engine, grading tools or nbgrader; a real Jupyter kernel running
its python executes the released notebooks blank (exercises unwritten) and with the
reference solutions typed into the answer cells."""

import copy
import importlib.metadata
import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from packaging.requirements import Requirement

from autograder.grading.cli import main
from autograder.grading.repo_paths import SOLUTIONS_DIR, assignments, notebook_path

pytestmark = pytest.mark.slow

# What a student's Jupyter brings besides the kit: the kernel itself.
KERNEL = "ipykernel"


def closure(names: list[str]) -> set[str]:
    """The installed distributions ``names`` need, transitively (markers for this python)."""
    found: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        found.add(key)
        for text in importlib.metadata.requires(name) or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return found


def link_distributions(names: set[str], site: Path) -> None:
    """Symlink every top-level file and folder of those distributions into ``site`` (the
    packages as installed here, without copying torch's gigabyte)."""
    for dist in importlib.metadata.distributions():
        if re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower() not in names:
            continue
        root = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if (root / top).exists() and not (site / top).exists():
                (site / top).symlink_to(root / top)


@pytest.fixture(scope="module")
def kit_python(tmp_path_factory):
    """A kit-only environment's python, with the kit built and installed by pip."""
    root = tmp_path_factory.mktemp("kit-alone")
    assert main(["student-kit", "--out", str(root / "kit")]) == 0
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    link_distributions(closure(["numpy", "torch", "matplotlib", "ipython", KERNEL]), Path(purelib))
    wheel = next((root / "kit").glob("*.whl"))
    # pip resolves the wheel's requirements against the linked packages, with no index
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index"]
    subprocess.run([*install, "--quiet", str(wheel)], check=True)
    return python, root / "kit"


def in_kit(python: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, "-I", "-c", code], capture_output=True, text=True, cwd=python.parent
    )


def test_the_kit_environment_has_the_checks_and_nothing_else_of_the_course(kit_python):
    python, _ = kit_python
    assert in_kit(python, "import autograder.checks.given, autograder.progress").returncode == 0
    for module in ("autograder.engine", "autograder.grading", "nbgrader", "dask", "jupyterlab"):
        done = in_kit(python, f"import {module}")
        assert "ModuleNotFoundError" in done.stderr, f"{module} is importable in the kit"
    assert sysconfig.get_path("purelib") not in in_kit(python, "import sys; print(sys.path)").stdout


@pytest.fixture(scope="module")
def kernel_name(kit_python, tmp_path_factory, monkeypatch_module):
    """A kernelspec that starts the kit environment's python, found through JUPYTER_PATH."""
    python, _ = kit_python
    share = tmp_path_factory.mktemp("jupyter")
    spec = share / "kernels" / "student-kit"
    spec.mkdir(parents=True)
    argv = [str(python), "-I", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "kit"}))
    monkeypatch_module.setenv("JUPYTER_PATH", str(share))
    return "student-kit"


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def execute(notebook, folder: Path, kernel: str, allow_errors: bool):
    """Run ``notebook`` in ``folder`` (written there first: the progress cell reads it)."""
    nbformat.write(notebook, folder / f"{folder.name}.ipynb")
    client = NotebookClient(
        notebook, kernel_name=kernel, timeout=300, allow_errors=allow_errors,
        resources={"metadata": {"path": str(folder)}},
    )  # fmt: skip
    client.execute()
    return notebook


def errors(notebook) -> list[tuple[str, str, bool]]:
    """(grade id or cell number, error name, whether it is a graded test cell) of every cell
    that raised."""
    found = []
    for number, cell in enumerate(notebook.cells, start=1):
        spec = cell.metadata.get("nbgrader", {})
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                test = bool(spec.get("grade")) and not spec.get("solution")
                found.append((spec.get("grade_id", str(number)), output.ename, test))
    return found


def progress_text(notebook) -> str:
    last = [cell for cell in notebook.cells if cell.cell_type == "code"][-1]
    return "".join(
        output.get("data", {}).get("text/plain", "") + output.get("text", "")
        for output in last.outputs
    )


@pytest.mark.parametrize("assignment", assignments())
def test_a_blank_release_runs_as_a_student_finds_it(kit_python, kernel_name, assignment):
    _, kit = kit_python
    folder = kit / assignment
    notebook = execute(
        nbformat.read(folder / f"{assignment}.ipynb", as_version=4), folder, kernel_name, True
    )
    raised = errors(notebook)
    assert raised, "a blank release must fail its checks"
    assert not [name for _, name, _ in raised if name in {"ModuleNotFoundError", "ImportError"}]
    # given cells and torch cells run; one that uses an unwritten answer stops at its stub,
    # and a later one that needs what that cell would have made finds no such name
    stopped = False
    for cell, name, test in raised:
        if not test:
            assert name == "NotImplementedError" or (stopped and name == "NameError"), cell
            stopped = True
    text = progress_text(notebook)
    assert re.search(r"progress: 0 of \d+ checks pass, 0 fail, \d+ not attempted", text), text


def solved(release, solution):
    """The release with each answer cell as the solution notebook has it, markers cut: what
    a student who typed the reference in would have (the visible tests stay the release's)."""
    answers = {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in solution.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    notebook = copy.deepcopy(release)
    for cell in notebook.cells:
        spec = cell.metadata.get("nbgrader", {})
        if spec.get("solution"):
            lines = answers[spec["grade_id"]].split("\n")
            markers = ("BEGIN SOLUTION", "END SOLUTION")
            cell.source = "\n".join(line for line in lines if not any(m in line for m in markers))
    return notebook


# Typed-in runs of the notebooks whose checks borrow other exercises (00's no_grad on Scalar,
# 01's exercises.alone, 05's SGD with add_ and the version check): the kit runs the
# student's own parts there. The others take as long again and prove less; nbval runs every
# solution notebook with the course's environment.
SOLVED = ["00-recipe", "01-worked-example", "05-common-pitfalls"]


@pytest.mark.parametrize("assignment", SOLVED)
def test_the_reference_typed_in_passes_every_visible_check(kit_python, kernel_name, assignment):
    _, kit = kit_python
    folder = kit.parent / "solved" / assignment
    folder.mkdir(parents=True)
    release = nbformat.read(kit / assignment / f"{assignment}.ipynb", as_version=4)
    solution = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    notebook = execute(solved(release, solution), folder, kernel_name, False)
    text = progress_text(notebook)
    total = re.search(r"progress: (\d+) of (\d+) checks pass, 0 fail, 0 not attempted", text)
    assert total and total[1] == total[2], text


def test_a_check_names_the_unwritten_exercise_it_needs(kit_python, kernel_name):
    """05 solved but for the Tensor cell (add_, mul_): the SGD check, which borrows add_ from
    the reference where there is one, asks for add_ first instead of failing on it."""
    _, kit = kit_python
    assignment = "05-common-pitfalls"
    folder = kit.parent / "prerequisite" / assignment
    folder.mkdir(parents=True)
    release = nbformat.read(kit / assignment / f"{assignment}.ipynb", as_version=4)
    solution = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    notebook = solved(release, solution)
    for ours, blank in zip(notebook.cells, release.cells, strict=True):
        if ours.metadata.get("nbgrader", {}).get("grade_id") == "tensor":
            ours.source = blank.source
    notebook = execute(notebook, folder, kernel_name, True)
    sgd = next(
        c
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "test_sgd_zero_grad"
    )
    error = next(output for output in sgd.outputs if output.output_type == "error")
    assert error.ename == "NotImplementedError"
    assert "this check also runs your `Tensor.add_`, which is not written yet" in error.evalue
    assert "not attempted" in progress_text(notebook)
