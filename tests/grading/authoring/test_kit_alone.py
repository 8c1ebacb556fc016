"""Does the student kit work alone, week by week? A fresh virtual environment holds the kit's
wheel and the third-party packages it needs (numpy, torch, matplotlib, IPython and the
kernel), nothing of the course's repository, engine, grading tools or nbgrader; a real
Jupyter kernel running its python executes each released notebook, from the first weekly
kit of a term that holds it, blank (exercises unwritten) and with the reference solutions
typed into the answer cells."""

import json
import re
import subprocess
import sys
import sysconfig
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from release_rules import graded_cells_passing
from tiny_course import graded_cell as one_point_test_cell
from visible_checks import solved

from autograder.grading.authoring.hub.environments import closure, installed_tops
from autograder.grading.cli import main
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)

pytestmark = pytest.mark.slow

# What a student's Jupyter brings besides the kit: the kernel itself.
KERNEL = "ipykernel"


def link_distributions(names: set[str], site: Path) -> None:
    """Symlink every top-level file and folder of those distributions into ``site`` (the
    packages as installed here, without copying torch's gigabyte)."""
    for _, tops in installed_tops(names):
        for top in tops:
            if not (site / top.name).exists():
                (site / top.name).symlink_to(top)


def weekly_kits(root: Path) -> dict[str, Path]:
    """Each assignment's folder in the first kit of a weekly term that holds it (one
    assignment due a week, a kit built mid-week), every kit holding what the week before did."""
    first_due = datetime(2027, 2, 1, 18, tzinfo=UTC)
    term = root / "term.toml"
    term.write_text(
        "[due]\n"
        + "".join(
            f'"{a}" = {(first_due + timedelta(weeks=n)).isoformat()}\n'
            for n, a in enumerate(assignments())
        )
    )
    first: dict[str, Path] = {}
    held: list[str] = []
    for number in range(len(assignments()) + 1):
        kit = root / f"kit-week-{number}"
        at = (first_due + timedelta(weeks=number - 1, days=3)).isoformat()
        assert main(["student-kit", "--term", str(term), "--at", at, "--out", str(kit)]) == 0
        now_held = sorted(p.name for p in kit.iterdir() if p.is_dir())
        assert now_held[: len(held)] == held, "a week's kit lost a notebook of the week before"
        held = now_held
        first.update({a: kit / a for a in held if a not in first})
    assert list(first) == assignments()
    return first


@pytest.fixture(scope="module")
def kit_python(tmp_path_factory):
    """A kit-only environment's python, with the kit's wheel installed by pip, and each
    assignment's folder in its first weekly kit."""
    root = tmp_path_factory.mktemp("kit-alone")
    kits = weekly_kits(root)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    link_distributions(closure(["numpy", "torch", "matplotlib", "ipython", KERNEL]), Path(purelib))
    wheel = next(kits[assignments()[0]].parent.glob("*.whl"))
    # pip resolves the wheel's requirements against the linked packages, with no index
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index"]
    subprocess.run([*install, "--quiet", str(wheel)], check=True)
    return python, kits


def in_kit(python: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, "-I", "-c", code], capture_output=True, text=True, cwd=python.parent
    )


def test_the_kit_environment_has_the_checks_and_nothing_else_of_the_course(kit_python):
    python, _ = kit_python
    imported = in_kit(python, "import autograder.checks.given, autograder.checks.progress")
    assert imported.returncode == 0
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
    _, kits = kit_python
    folder = kits[assignment]
    notebook = execute(
        nbformat.read(folder / f"{assignment}.ipynb", as_version=4), folder, kernel_name, True
    )
    raised = errors(notebook)
    assert raised, "a blank release must fail its checks"
    passing = graded_cells_passing(notebook)
    assert passing == [], f"graded cells that pass with no answer written: {passing}"
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


def test_the_blank_release_probe_sees_a_graded_cell_that_passes():
    """A graded cell that passes without any answer (free points) is reported, and one
    that raised is not."""
    notebook = nbformat.read(notebook_path(COURSE_DIR, "00-recipe"), as_version=4)
    graded = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    for cell in graded:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="")]
    assert graded_cells_passing(notebook) == [], "every graded code cell raised"
    notebook.cells.append(one_point_test_cell("free_points", "assert True"))
    assert graded_cells_passing(notebook) == ["assert True"]


# Typed-in runs of the notebooks whose checks borrow other exercises (00's no_grad on Scalar,
# 01's and 09's exercises.alone, 05's SGD with add_ and the version check): the kit runs the
# student's own parts there. The others take as long again and prove less; nbval runs every
# solution notebook with the course's environment.
SOLVED = ["00-recipe", "01-worked-example", "05-common-pitfalls", "09-mixed-precision"]


@pytest.mark.parametrize("assignment", SOLVED)
def test_the_reference_typed_in_passes_every_visible_check(
    kit_python, kernel_name, assignment, tmp_path
):
    _, kits = kit_python
    folder = tmp_path / assignment
    folder.mkdir()
    release = nbformat.read(kits[assignment] / f"{assignment}.ipynb", as_version=4)
    solution = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    notebook = execute(solved(release, solution), folder, kernel_name, False)
    text = progress_text(notebook)
    total = re.search(r"progress: (\d+) of (\d+) checks pass, 0 fail, 0 not attempted", text)
    assert total and total[1] == total[2], text


PREREQUISITE = "05-common-pitfalls"
UNWRITTEN = "tensor"  # 05's cell of add_ and mul_, which the SGD check also runs
SGD_CHECK = "test_sgd_zero_grad"
PREREQUISITE_MESSAGE = "this check also runs your `Tensor.add_`, which is not written yet"


def solved_but_one(release_folder: Path) -> nbformat.NotebookNode:
    """05 with the reference typed in everywhere but the Tensor cell (add_, mul_)."""
    release = nbformat.read(release_folder / f"{PREREQUISITE}.ipynb", as_version=4)
    solution = nbformat.read(notebook_path(SOLUTIONS_DIR, PREREQUISITE), as_version=4)
    notebook = solved(release, solution)
    for ours, blank in zip(notebook.cells, release.cells, strict=True):
        if ours.metadata.get("nbgrader", {}).get("grade_id") == UNWRITTEN:
            ours.source = blank.source
    return notebook


def graded_cell(notebook, grade_id: str):
    return next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )


def test_a_check_names_the_unwritten_exercise_it_needs(kit_python, kernel_name, tmp_path):
    """The SGD check, which borrows add_ from the reference where there is one, asks for add_
    first instead of failing on it."""
    _, kits = kit_python
    folder = tmp_path / PREREQUISITE
    folder.mkdir()
    notebook = execute(solved_but_one(kits[PREREQUISITE]), folder, kernel_name, True)
    error = next(o for o in graded_cell(notebook, SGD_CHECK).outputs if o.output_type == "error")
    assert error.ename == "NotImplementedError"
    assert PREREQUISITE_MESSAGE in error.evalue
    assert "not attempted" in progress_text(notebook)


# The last cell of the lab's copy: where its kernel runs, and whether the reference is there.
WHERE_AM_I = (
    "import importlib.util, sys\n"
    "print('kernel python:', sys.executable)\n"
    "print('reference engine:', importlib.util.find_spec('autograder.engine'))"
)


def test_the_kit_in_a_students_jupyterlab(kit_python, kernel_name, tmp_path):
    """A real JupyterLab (the student profile) whose notebook runs on the kit environment's
    kernel: Run All shows a passing check and the prerequisite message in Chromium;
    screenshots go to build/screenshots/kit-*.png."""
    from browser_helpers import (
        PAGE_MS,
        RUN_MS,
        SCREENSHOTS,
        chromium,
        code_cell,
        evidence_on_failure,
        jupyter_lab,
        replace_source,
        run_menu,
        wait_until_run,
    )
    from playwright.sync_api import expect

    expect.set_options(timeout=PAGE_MS)
    python, kits = kit_python
    notebook = solved_but_one(kits[PREREQUISITE])
    notebook.metadata["kernelspec"] = {"name": kernel_name, "display_name": "kit"}
    for cell in notebook.cells:
        # Run All goes on past a failing cell (JupyterLab sends such a cell stop_on_error
        # false), as a student running cell by cell would
        if cell.cell_type == "code":
            cell.metadata.setdefault("tags", []).append("raises-exception")
    notebook.cells.append(nbformat.v4.new_code_cell(WHERE_AM_I))
    lab = tmp_path / "lab"
    (lab / PREREQUISITE).mkdir(parents=True)
    nbformat.write(notebook, lab / PREREQUISITE / f"{PREREQUISITE}.ipynb")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    sgd_first_line = graded_cell(notebook, SGD_CHECK).source.splitlines()[0]
    solution = nbformat.read(notebook_path(SOLUTIONS_DIR, PREREQUISITE), as_version=4)
    written = graded_cell(solved(notebook, solution), UNWRITTEN).source

    with chromium("kit lab test") as browser:
        with jupyter_lab(lab, tmp_path / "state", student=True) as server:
            page = browser.new_page(viewport={"width": 1200, "height": 1400})
            page.set_default_timeout(PAGE_MS)
            with evidence_on_failure(page, "kit-lab", server):
                page.goto(server.url(f"lab/tree/{PREREQUISITE}/{PREREQUISITE}.ipynb"))
                # the status bar names the kernel once it is up (Run All before that asks
                # which kernel to start)
                expect(page.get_by_text("kit | Idle")).to_have_count(1)
                run_menu(page, "Run All Cells")
                last = code_cell(page, "print('kernel python:'")
                expect(last.locator(".jp-OutputArea-output")).to_contain_text(
                    "reference engine: None", timeout=RUN_MS * 3
                )
                wait_until_run(last)
                assert str(python) in last.locator(".jp-OutputArea-output").inner_text()

                sgd = code_cell(page, sgd_first_line)
                stderr = sgd.locator("[data-mime-type='application/vnd.jupyter.stderr']")
                expect(stderr).to_contain_text(PREREQUISITE_MESSAGE)
                stderr.scroll_into_view_if_needed()
                frames = stderr.inner_text()
                assert "site-packages" not in frames and "contextlib" not in frames, frames
                sgd.screenshot(path=str(SCREENSHOTS / "kit-prerequisite.png"))

                # As the message says: write add_, run the check again (Run All: the cells
                # between build on the Tensor class), and it passes.
                tensor_cell = code_cell(page, "class Tensor:")
                expect(tensor_cell).to_have_count(1)
                replace_source(page, tensor_cell, written)
                run_menu(page, "Run All Cells")
                expect(sgd.locator(".autograder-pass").first).to_be_visible(timeout=RUN_MS * 3)
                wait_until_run(sgd)
                expect(stderr).to_have_count(0)
                sgd.scroll_into_view_if_needed()
                sgd.screenshot(path=str(SCREENSHOTS / "kit-check-pass.png"))
