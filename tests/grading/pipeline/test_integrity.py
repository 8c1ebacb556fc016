"""Does the integrity scan catch planted cheats, and leave honest students alone?"""

import json
import shutil

import nbformat
import pytest

from autograder.grading.assurance.cohort import REFERENCE, build_submission, write_cohort
from autograder.grading.course.course_root import load_course
from autograder.grading.course.nbgrader_workspace import create_workspace, run_nbgrader
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.integrity import (
    CHEATING_RULES,
    RULES,
    Flag,
    read_flags,
    scan_assignment,
    scan_notebook,
    scan_submissions,
    write_flags,
    zero_flagged_exercises,
    zero_flagged_setting,
)

RECIPE = "00-recipe"


def reference(assignment=RECIPE):
    """The reference solution as a student hands it in."""
    return build_submission(REFERENCE, assignment, SOLUTIONS_DIR, COURSE_DIR)


def cell_with_id(notebook, grade_id):
    return next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )


def scan(tmp_path, notebook, assignment=RECIPE):
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(notebook, path)
    return scan_notebook(path, "mallory", assignment, notebook_path(COURSE_DIR, assignment))


def scan_with_cheat(tmp_path, cheat, cell="scalar"):
    """Flags of the reference with ``cheat`` typed at the top of solution cell ``cell``."""
    notebook = reference()
    target = cell_with_id(notebook, cell)
    target.source = cheat + "\n" + target.source
    return scan(tmp_path, notebook)


@pytest.mark.parametrize("assignment", assignments())
def test_honest_reference_and_blank_raise_no_flag(tmp_path, assignment):
    release = notebook_path(COURSE_DIR, assignment)
    for notebook in (reference(assignment), nbformat.read(release, as_version=4)):
        assert scan(tmp_path, notebook, assignment) == []


def test_whole_demo_cohort_raises_no_flag(tmp_path):
    # The planted-bug students are honest too (one imports warnings in a solution cell).
    write_cohort(tmp_path / "submitted", SOLUTIONS_DIR, COURSE_DIR)
    for assignment in assignments():
        assert scan_submissions(tmp_path / "submitted", assignment, COURSE_DIR) == []


CHEATS = [
    # (test id, cheat typed at the top of the `scalar` cell, rule, line, words in the detail)
    ("import-torch", "import torch", "autograd-import", 1, "imports torch"),
    ("from-torch", "from torch import autograd", "autograd-import", 1, "imports torch"),
    ("torch-nn-as", "import torch.nn as nn", "autograd-import", 1, "imports torch.nn"),
    ("jax", "import jax.numpy as jnp", "autograd-import", 1, "imports jax.numpy"),
    ("functorch", "from functorch import grad", "autograd-import", 1, "functorch"),
    ("mlx", "import mlx.core as mx", "autograd-import", 1, "mlx.core"),
    ("tensorflow", "import tensorflow as tf", "autograd-import", 1, "tensorflow"),
    ("engine", "from autograder.engine import scalar", "autograd-import", 1, "autograder.engine"),
    ("dunder-import", 't = __import__("torch")', "autograd-import", 1, "through __import__"),
    (
        "importlib",
        'import importlib\nt = importlib.import_module("torch")',
        "autograd-import",
        2,
        "importlib.import_module",
    ),
    ("setup-torch", "grad = torch.autograd.grad", "autograd-import", 1, "uses torch"),
    ("timeit-torch", "%timeit import torch", "autograd-import", 1, "imports torch"),
    ("sys-modules-read", 'import sys\nt = sys.modules["torch"]', "autograd-import", 2, "torch"),
    ("np-patch", "np.allclose = lambda *a, **k: True", "monkeypatch", 1, "np.allclose"),
    (
        "own-np-patch",
        "import numpy as np\nnp.allclose = lambda *a, **k: True",
        "monkeypatch",
        2,
        "monkeypatching numpy",
    ),
    (
        "numpy-testing",
        "import numpy.testing\nnumpy.testing.assert_allclose = print",
        "monkeypatch",
        2,
        "numpy.testing.assert_allclose",
    ),
    (
        "parity-module",
        "from autograder.checks import parity\nparity.check_parity = lambda *a, **k: None",
        "monkeypatch",
        2,
        "autograder.checks.parity",
    ),
    (
        "dotted-parity",
        "import autograder.checks.parity\nautograder.checks.parity.check_parity = print",
        "monkeypatch",
        2,
        "autograder.checks.parity.check_parity",
    ),
    ("setattr", 'setattr(np, "allclose", lambda *a: True)', "monkeypatch", 1, "setattr"),
    ("del", "del np.allclose", "monkeypatch", 1, "deletes np.allclose"),
    ("builtins-dict", '__builtins__.__dict__["abs"] = len', "monkeypatch", 1, "built-in"),
    ("builtins-module", "import builtins\nbuiltins.print = len", "monkeypatch", 2, "builtins"),
    ("sys-modules", 'import sys\nsys.modules["torch"] = None', "monkeypatch", 2, "sys.modules"),
    ("ipython", 'get_ipython().user_ns["x"] = 1', "monkeypatch", 1, "IPython shell"),
    ("globals", 'globals()["check_parity"] = print', "monkeypatch", 1, "check_parity"),
    ("rebind", "check_parity = lambda *a, **k: None", "monkeypatch", 1, "rebinds check_parity"),
    ("redefine", "def check_flags(*a, **k):\n    pass", "monkeypatch", 1, "redefines check_flags"),
    (
        "global-rebind",
        "def quiet():\n    global check_parity\n    check_parity = print",
        "monkeypatch",
        3,
        "rebinds check_parity",
    ),
    ("exec", 'exec("x = 1")', "dynamic-code", 1, "exec"),
    ("eval", 'y = eval("1 + 1")', "dynamic-code", 1, "eval"),
    ("compile", 'code = compile("1", "<x>", "eval")', "dynamic-code", 1, "compile"),
    ("shell", "!ls", "dynamic-code", 1, "shell"),
    ("shell-output", "files = !ls", "dynamic-code", 1, "shell"),
    ("cell-magic", "%%bash\nls", "dynamic-code", 1, "%%bash"),
    ("run-magic", "%run helper.py", "dynamic-code", 1, "%run"),
    ("subprocess", 'import subprocess\nsubprocess.run(["ls"])', "dynamic-code", 2, "subprocess"),
    (
        "open-solutions",
        'text = open("../../solutions/00-recipe/00-recipe.ipynb").read()',
        "file-access",
        1,
        "goes up",
    ),
    (
        "path-absolute",
        'from pathlib import Path\nPath("/etc/passwd").read_text()',
        "file-access",
        2,
        "absolute",
    ),
    ("np-load", 'np.load("../answers.npy")', "file-access", 1, "numpy.load"),
    (
        "gradebook",
        'import sqlite3\nsqlite3.connect("gradebook.db")',
        "file-access",
        2,
        "gradebook",
    ),
    ("listdir", 'import os\nos.listdir("..")', "file-access", 2, "os.listdir"),
    ("glob", 'import glob\nglob.glob("*.ipynb")', "file-access", 2, ".ipynb"),
    ("shell-cat", "!cat ../x", "file-access", 1, "../x"),
    ("computed-path", 'name = "x"\nopen(name)', "file-access", 2, "cannot be verified"),
    ("syntax", "def broken(:", "syntax-error", 1, "does not parse"),
]


@pytest.mark.parametrize(
    "cheat, rule, line, words", [c[1:] for c in CHEATS], ids=[c[0] for c in CHEATS]
)
def test_planted_cheat_is_flagged_at_its_cell_and_line(tmp_path, cheat, rule, line, words):
    flags = scan_with_cheat(tmp_path, cheat)
    matching = [f for f in flags if (f.cell, f.line, f.rule) == ("scalar", line, rule)]
    assert matching, flags
    assert any(words in f.detail for f in matching), matching
    assert all(f.cell == "scalar" and f.student == "mallory" for f in flags)
    assert {f.rule for f in flags} <= set(RULES)


@pytest.mark.parametrize(
    "code",
    [
        "%timeit 1 + 1",
        "%matplotlib inline",
        'with open("notes.txt", "w") as handle:\n    handle.write("hi")',
        "def f(np):\n    np.allclose = None",
        "import numpy as np\nimport warnings",
        "from autograder import check_parity",
        "import re\nPATTERN = re.compile('x')",
        "def scale(data):\n    data.values = 2",
    ],
)
def test_honest_code_is_not_flagged(tmp_path, code):
    assert scan_with_cheat(tmp_path, code) == []


def add_cell(notebook, after, source):
    """Insert a code cell without nbgrader metadata after cell ``after``; return its position."""
    index = notebook.cells.index(cell_with_id(notebook, after)) + 1
    notebook.cells.insert(index, nbformat.v4.new_code_cell(source))
    return index + 1


def test_added_cell_is_scanned_and_counted_towards_the_exercise_above(tmp_path):
    notebook = reference()
    position = add_cell(notebook, "test_scalar_ops", "x = 1\nimport torch")
    flags = scan(tmp_path, notebook)
    label = f"added cell {position} (exercise scalar)"
    assert [(f.cell, f.line, f.rule) for f in flags] == [(label, 2, "autograd-import")]


def test_added_cell_may_use_torch_without_importing_it(tmp_path):
    # Exploring what torch does in a scratch cell is part of the course, not a cheat.
    notebook = reference()
    add_cell(notebook, "test_scalar_ops", "print(torch.tensor(2.0).exp())")
    assert scan(tmp_path, notebook) == []


def test_edited_demo_cell_is_judged_only_on_what_the_student_added(tmp_path):
    notebook = reference("06-alternatives")
    demo = next(c for c in notebook.cells if "import jax" in c.source)
    demo.source += "\nimport torch"
    flags = scan(tmp_path, notebook, "06-alternatives")
    assert [(f.rule, f.detail) for f in flags] == [
        ("autograd-import", "imports torch (an autograd library)")
    ]


def test_locked_cells_are_not_scanned_but_edits_and_deletions_are_reported(tmp_path):
    notebook = reference()
    setup = cell_with_id(notebook, "setup")
    setup.source = setup.source.replace("rng = ", "import os\nrng = ")
    notebook.cells.remove(cell_with_id(notebook, "test_no_grad"))
    added_line = setup.source.splitlines().index("import os") + 1
    flags = scan(tmp_path, notebook)
    assert sorted((f.cell, f.line, f.rule) for f in flags) == [
        ("setup", added_line, "locked-cell-edited"),
        ("test_no_grad", 0, "locked-cell-edited"),
    ]
    assert "deleted" in flags[-1].detail or "deleted" in flags[0].detail


def test_release_with_hidden_tests_is_not_mistaken_for_an_edit(tmp_path):
    path = tmp_path / "submitted.ipynb"
    nbformat.write(reference(), path)
    assert scan_notebook(path, "ann", RECIPE, notebook_path(SOLUTIONS_DIR, RECIPE)) == []


def test_scan_assignment_reads_the_folders_the_course_config_names(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        'c.CourseDirectory.submitted_directory = "handins"\n'
        'c.CourseDirectory.release_directory = "handout"\n'
    )
    shutil.copytree(COURSE_DIR / RECIPE, root / "handout" / RECIPE)
    notebook = reference()
    cell_with_id(notebook, "scalar").source += "\nimport torch"
    path = notebook_path(root / "handins" / "mallory", RECIPE)
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    flags, zeroed = scan_assignment(load_course(root), RECIPE)
    assert [(f.student, f.rule) for f in flags] == [("mallory", "autograd-import")]
    assert read_flags(root / "integrity.json") == flags and zeroed == []


def test_a_course_without_its_release_is_not_scanned_and_says_so(tmp_path, capsys):
    # never this repository's course/ in its place: another course's 00-recipe is not ours
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    notebook = reference()
    cell_with_id(notebook, "scalar").source += "\nimport torch"
    path = notebook_path(root / "submitted" / "mallory", RECIPE)
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    flags, zeroed = scan_assignment(load_course(root), RECIPE)
    assert flags == [] and zeroed == []
    warning = capsys.readouterr().err.strip()
    assert warning.startswith(f"warning: integrity scan of {RECIPE} skipped: the course has no")
    assert f"nbgrader generate_assignment {RECIPE}" in warning


def test_unreadable_notebook_is_a_flag_not_an_exception(tmp_path):
    folder = tmp_path / "submitted" / "zoe" / RECIPE
    folder.mkdir(parents=True)
    (folder / f"{RECIPE}.ipynb").write_text("{not json")
    flags = scan_submissions(tmp_path / "submitted", RECIPE, COURSE_DIR)
    assert [(f.student, f.rule) for f in flags] == [("zoe", "unreadable")]


def test_a_cell_with_broken_nbgrader_metadata_is_a_flag_not_an_exception(tmp_path):
    notebook = reference()
    notebook.cells[0].metadata["nbgrader"] = None
    path = tmp_path / f"{RECIPE}.ipynb"
    nbformat.write(notebook, path)
    flags = scan_notebook(path, "zoe", RECIPE)
    assert [(f.rule, f.detail) for f in flags] == [
        ("unreadable", f"{path.name}: cell 1: its metadata (or nbgrader's part) is not a mapping")
    ]


def test_a_grade_cell_is_locked_as_nbgrader_restores_it_without_the_locked_mark(tmp_path):
    # nbgrader.utils.is_locked: a grade cell that is not a solution is locked (autograde
    # overwrites it) even without "locked": true. Editing it is an edit of a locked cell,
    # not the student's code: autograde puts the original back.
    notebook, release = reference(), reference()
    for book, source in ((release, "assert True"), (notebook, "import torch\nassert True")):
        book.cells.append(nbformat.v4.new_code_cell(source))
        book.cells[-1].metadata["nbgrader"] = {"grade": True, "grade_id": "t", "points": 1}
    path, given = tmp_path / "submitted.ipynb", tmp_path / "release.ipynb"
    nbformat.write(notebook, path)
    nbformat.write(release, given)
    flags = scan_notebook(path, "ann", RECIPE, given)
    assert [(f.cell, f.rule) for f in flags] == [("t", "locked-cell-edited")]


def test_flags_round_trip_through_json(tmp_path):
    flags = [Flag("ann", RECIPE, "scalar", 3, "monkeypatch", "assigns np.allclose")]
    write_flags(flags, tmp_path / "flags.json")
    assert json.loads((tmp_path / "flags.json").read_text())[0]["rule"] == "monkeypatch"
    assert read_flags(tmp_path / "flags.json") == flags


def test_zero_flagged_setting_reads_nbgrader_config(tmp_path):
    from autograder.grading.course.repo_paths import NBGRADER_CONFIG

    assert zero_flagged_setting(NBGRADER_CONFIG) is False
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c = get_config()\nc.CourseIntegrity.zero_flagged_exercises = True\n")
    assert zero_flagged_setting(config) is True
    config.write_text("c = get_config()\n")
    assert zero_flagged_setting(config) is False


@pytest.mark.slow
def test_zeroing_sets_the_flagged_exercise_tests_to_zero_in_a_real_gradebook(tmp_path):
    root = create_workspace(tmp_path / "course").root
    for other in (root / "source").iterdir():
        if other.name != RECIPE:
            shutil.rmtree(other)
    run_nbgrader(root, "generate_assignment", RECIPE, "--force")
    # The cheat does not break the reference, so autograde gives full marks...
    notebook = reference()
    scalar = cell_with_id(notebook, "scalar")
    scalar.source = "np.allclose = np.allclose\n" + scalar.source
    submitted = notebook_path(root / "submitted" / "mallory", RECIPE)
    submitted.parent.mkdir(parents=True)
    nbformat.write(notebook, submitted)
    run_nbgrader(root, "autograde", RECIPE, "--force")
    db_url = f"sqlite:///{root / 'gradebook.db'}"
    before = cell_scores(db_url, "mallory", RECIPE)
    assert all(s.score == s.max_score for s in before.values())
    flags = scan_submissions(root / "submitted", RECIPE, root / "release")
    assert {f.rule for f in flags} == {"monkeypatch"}
    source = notebook_path(root / "source", RECIPE)
    # An autograd import costs its own exercise only...
    imports = [Flag("mallory", RECIPE, "scalar", 1, "autograd-import", "imports torch")]
    assert sorted(zero_flagged_exercises(db_url, imports, source)) == [
        ("mallory", RECIPE, "test_recipe"),
        ("mallory", RECIPE, "test_scalar_ops"),
    ]
    after = cell_scores(db_url, "mallory", RECIPE)
    assert after["test_scalar_ops"].score == after["test_recipe"].score == 0
    assert after["test_no_grad"].score == after["test_no_grad"].max_score
    # ...while a monkeypatch discredits every test after it, later exercises' too.
    zeroed = zero_flagged_exercises(db_url, flags, source)
    assert sorted(zeroed) == [
        ("mallory", RECIPE, "test_no_grad"),
        ("mallory", RECIPE, "test_recipe"),
        ("mallory", RECIPE, "test_scalar_ops"),
    ]
    after = cell_scores(db_url, "mallory", RECIPE)
    assert all(s.score == 0 for s in after.values())
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gradebook:
        comment = gradebook.find_comment("scalar", RECIPE, RECIPE, "mallory")
        assert "np.allclose" in comment.comment
    # Rules that are not cheating (a locked cell edited) never cost points.
    info = [Flag("mallory", RECIPE, "scalar", 1, "locked-cell-edited", "edited")]
    assert zero_flagged_exercises(db_url, info, source) == []
    assert "locked-cell-edited" not in CHEATING_RULES


@pytest.mark.parametrize(
    "cheat",
    [
        'reference_methods(Scalar, "__add__", "__mul__").__enter__()',
        "from autograder.checks.given import reference_parts",
        "from autograder import reference_parts",
        "import autograder\nautograder.Exercises",
    ],
)
def test_borrowing_the_reference_in_a_solution_cell_is_flagged(tmp_path, cheat):
    # The setup cell imports reference_methods for the checks; a solution must not use it.
    rules = {flag.rule for flag in scan_with_cheat(tmp_path, cheat)}
    assert "autograd-import" in rules
