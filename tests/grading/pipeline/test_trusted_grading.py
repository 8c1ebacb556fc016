"""Trusted verdicts end to end, with real kernels and nbgrader: cheats that earn points
when the test cells run in the student's kernel earn none when they run in the trusted
kernel, and honest submissions get the same grades either way."""

import nbformat
import pytest

from autograder.grading.assurance.cohort import BLANK, BUGS, REFERENCE, build_submission
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.nbgrader_workspace import copy_workspace
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde

pytestmark = pytest.mark.slow

RECIPE = "00-recipe"
POWER_BUG = "bug-power-rule"
ACCUMULATE = "node.grad = grad if node.grad is None else node.grad + grad"

# Each cheat: (the honest submission it starts from, code appended to its Scalar cell,
# (old, new) replacements in that cell). All of them earn points in the student's kernel.
CHEATS = {
    # The test cells call whatever the notebook's globals hold under the checks' names.
    "cheat-replace-checks": (
        POWER_BUG,
        "globals()['check_parity'] = lambda *args, **kwargs: None\n"
        "globals()['check_flags'] = lambda *args, **kwargs: None\n",
        [],
    ),
    # Every later cell, test cells included, becomes `pass`.
    "cheat-input-transformer": (
        BLANK,
        "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n",
        [],
    ),
    # Later cells' errors are neither shown nor recorded: failing tests look clean.
    "cheat-exception-silencer": (
        BLANK,
        "_shell = get_ipython()\n"
        "_run_code = _shell.run_code\n"
        "async def _quiet(code_obj, result=None, *, async_=False):\n"
        "    await _run_code(code_obj, None, async_=async_)\n"
        "    return False\n"
        "_shell.run_code = _quiet\n"
        "_shell.showtraceback = lambda *args, **kwargs: None\n",
        [],
    ),
    # A trace function makes the check's comparison see torch's numbers as the student's.
    "cheat-settrace": (
        POWER_BUG,
        "import sys as _sys\n"
        "def _local(frame, event, arg):\n"
        "    if event == 'line' and type(frame.f_locals.get('expected')).__name__ == 'ndarray':\n"
        "        frame.f_locals['got'] = frame.f_locals['expected']\n"
        "    return _local\n"
        "def _global(frame, event, arg):\n"
        "    return _local if frame.f_code.co_name == 'compare_arrays' else None\n"
        "_sys.settrace(_global)\n",
        [],
    ),
    # Gradients overwrite instead of accumulating, and claim to equal anything.
    "cheat-lying-eq": (
        REFERENCE,
        "class _Liar(float):\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "    __hash__ = float.__hash__\n",
        [(ACCUMULATE, "node.grad = _Liar(grad)")],
    ),
}
HONEST = [REFERENCE, BLANK, POWER_BUG]
FULL = {"test_scalar_ops": 2.0, "test_recipe": 3.0, "test_no_grad": 2.0}


def scalar_cell(notebook):
    return next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "scalar"
    )


def hand_in(root, student, notebook):
    target = notebook_path(root / "submitted" / student, RECIPE)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """00-recipe released, honest students and cheats handed in."""
    root = tmp_path_factory.mktemp("trusted") / "template"
    release = generate_release(root, [RECIPE]).release
    # A student kernel that never connects costs this long per test cell.
    with (root / "nbgrader_config.py").open("a") as config:
        config.write("\nc.TrustedExecute.serve_wait = 8\n")
    for student in HONEST:
        hand_in(root, student, build_submission(student, RECIPE, SOLUTIONS_DIR, release))
    for student, (base, code, edits) in CHEATS.items():
        notebook = build_submission(base, RECIPE, SOLUTIONS_DIR, release)
        cell = scalar_cell(notebook)
        for old, new in edits:
            assert old in cell.source, old
            cell.source = cell.source.replace(old, new)
        cell.source += "\n\n" + code
        hand_in(root, student, notebook)
    return root


def graded(template, verdicts):
    root = copy_workspace(template, template.parent / verdicts)
    run = autograde(root, [RECIPE], GradingSettings(workers=2, progress=False, verdicts=verdicts))[
        0
    ]
    assert {r.status for r in run.records} == {"graded"}, [
        (r.student, r.status, r.message) for r in run.records
    ]
    db_url = f"sqlite:///{root / 'gradebook.db'}"
    students = HONEST + list(CHEATS)
    points = {
        s: {cell: score.score for cell, score in cell_scores(db_url, s, RECIPE).items()}
        for s in students
    }
    return root, points


@pytest.fixture(scope="module")
def kernel(template):
    return graded(template, "kernel")[1]


@pytest.fixture(scope="module")
def trusted(template):
    return graded(template, "trusted")


def test_honest_grades_are_the_same_as_in_the_students_kernel(trusted, kernel):
    _, points = trusted
    assert points[REFERENCE] == FULL
    assert sum(points[BLANK].values()) == 0
    for student in HONEST:
        assert points[student] == kernel[student], student


def test_cheats_pay_in_the_students_kernel_but_not_in_the_trusted_one(trusted, kernel):
    _, points = trusted
    expected = {student: dict(kernel[base]) for student, (base, _, _) in CHEATS.items()}
    expected["cheat-lying-eq"]["test_recipe"] = 0.0  # it does not accumulate gradients
    for student in CHEATS:
        # Proof that the cheat is real: it gains points when the tests share its kernel.
        assert sum(kernel[student].values()) > sum(expected[student].values()), student
        assert points[student] == expected[student], student


def test_a_test_without_verdict_fails_and_says_why(trusted):
    root, _ = trusted
    path = notebook_path(root / "autograded" / "cheat-input-transformer", RECIPE)
    notebook = nbformat.read(path, as_version=4)
    tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    tests = [c for c in tests if not c.metadata["nbgrader"].get("solution")]
    for cell in tests:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert errors and errors[0].ename == "NoVerdict", cell.metadata["nbgrader"]["grade_id"]
        assert "did not connect" in errors[0].evalue


# A notebook other than 00 graded whole in both modes: its reference, blank and one planted
# bug (the tests of 03 use detach, views and errors across the channel).
WHOLE = "03-gradient-controls"
WHOLE_STUDENTS = [REFERENCE, BLANK, "bug-detach-copies"]


@pytest.fixture(scope="module")
def whole_notebook(tmp_path_factory):
    """WHOLE released and its students handed in; their cell grades in each mode."""
    root = tmp_path_factory.mktemp("whole") / "template"
    release = generate_release(root, [WHOLE]).release
    for student in WHOLE_STUDENTS:
        target = notebook_path(root / "submitted" / student, WHOLE)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(build_submission(student, WHOLE, SOLUTIONS_DIR, release), target)
    grades = {}
    for verdicts in ("kernel", "trusted"):
        workspace = copy_workspace(root, root.parent / verdicts)
        run = autograde(
            workspace, [WHOLE], GradingSettings(workers=2, progress=False, verdicts=verdicts)
        )[0]
        assert {r.status for r in run.records} == {"graded"}, [
            (r.student, r.status, r.message) for r in run.records
        ]
        db_url = f"sqlite:///{workspace / 'gradebook.db'}"
        grades[verdicts] = {s: cell_scores(db_url, s, WHOLE) for s in WHOLE_STUDENTS}
    return grades


def test_a_whole_notebook_grades_the_same_in_both_modes(whole_notebook):
    kernel, trusted = whole_notebook["kernel"], whole_notebook["trusted"]
    assert all(s.score == s.max_score > 0 for s in trusted[REFERENCE].values())
    assert sum(s.score for s in trusted[BLANK].values()) == 0
    bug = next(b for b in BUGS if b.student == WHOLE_STUDENTS[2] and b.assignment == WHOLE)
    lost = {cell for cell, s in trusted[bug.student].items() if s.score < s.max_score}
    assert lost == bug.loses
    for student in WHOLE_STUDENTS:
        assert {c: s.score for c, s in trusted[student].items()} == {
            c: s.score for c, s in kernel[student].items()
        }, student


def test_the_trusted_kernels_connection_stays_out_of_the_student_kernels_folder(tmp_path):
    # The job's config points kernels at a folder the sandboxed student kernel can write
    # (its own connection file and ipc sockets): the trusted kernel must not be there, or
    # the student's code could read its key or bind its socket paths before it does.
    from traitlets.config import Config

    from autograder.grading.pipeline.verdicts.executor import TrustedKernelClient

    job = tmp_path / "kernel-runtime"
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(job / "kernel")
    config.KernelManager.connection_file = str(job / "connection.json")
    private = tmp_path / "private"
    client = TrustedKernelClient(config=config, spec_folder=str(private / "kernels"))
    manager = client.create_kernel_manager()
    assert manager.transport == "ipc"
    assert manager.ip == str(private / "kernel")
    assert manager.connection_file == str(private / "connection.json")
