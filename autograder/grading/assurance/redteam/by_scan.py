"""The red team's cheats stopped by the integrity scan (flagged, then zeroing takes the points)."""

import autograder.grading.assurance.redteam.cheat_code as code
from autograder.grading.assurance.cohort import BLANK, REFERENCE
from autograder.grading.assurance.redteam.cheat import (
    POW_SOLVED,
    Cheat,
    in_cell,
    torch_cheat,
    with_wrong_power_rule,
)

CHEATS: tuple[Cheat, ...] = (
    Cheat(
        "cheat-patch-checks",
        "rebinds check_parity and check_flags to functions that accept anything",
        BLANK,
        in_cell("scalar", "", "check_parity = check_flags = lambda *args, **kwargs: None"),
        honest_points=0,
        flags=frozenset({"monkeypatch"}),
    ),
    Cheat(
        "cheat-patch-numpy",
        "makes np.allclose and np.testing.assert_allclose always agree",
        BLANK,
        in_cell(
            "scalar",
            "",
            "np.allclose = lambda *args, **kwargs: True\n"
            "np.testing.assert_allclose = lambda *args, **kwargs: None",
        ),
        honest_points=0,
        flags=frozenset({"monkeypatch"}),
    ),
    Cheat(
        "cheat-torch-inside-engine",
        "the power rule's derivative computed by torch.autograd inside the NumPy engine",
        REFERENCE,
        in_cell(
            "scalar",
            POW_SOLVED,
            "import torch\n"
            "        base = torch.tensor(self.data, dtype=torch.float64, requires_grad=True)\n"
            "        derivative = torch.autograd.grad(base**exponent, base)[0].item()",
        ),
        honest_points=2,  # test_no_grad: the rest of its engine is the reference's
        flags=frozenset({"autograd-import"}),
    ),
    Cheat(
        "cheat-read-source-notebook",
        "searches the disk for the instructor's notebook and runs its solution cells",
        BLANK,
        in_cell(
            "scalar",
            "",
            "import json, pathlib\n"
            "for folder in pathlib.Path.cwd().parents:\n"
            "    source = folder / 'source' / '00-recipe' / '00-recipe.ipynb'\n"
            "    if source.exists():\n"
            "        for cell in json.loads(source.read_text())['cells']:\n"
            "            if cell['metadata'].get('nbgrader', {}).get('solution'):\n"
            "                exec(''.join(cell['source']))",
        ),
        honest_points=0,
        flags=frozenset({"file-access", "dynamic-code"}),
    ),
    Cheat(
        "cheat-read-gradebook",
        "opens the gradebook to look at other students' grades",
        BLANK,
        in_cell(
            "scalar",
            "",
            "import sqlite3\n"
            "sqlite3.connect('../../../gradebook.db').execute('select * from grade')",
        ),
        honest_points=0,
        flags=frozenset({"file-access"}),
    ),
    torch_cheat("cheat-torch-built-name", "scan"),
    Cheat(
        "cheat-globals-checks",
        "replaces the checks through globals() under built names",
        BLANK,
        in_cell("scalar", "", code.GLOBALS_CHECKS),
        honest_points=0,
        defence="scan",
    ),
    Cheat(
        "cheat-main-module",
        "replaces the checks as attributes of __main__",
        BLANK,
        in_cell("scalar", "", code.MAIN_MODULE),
        honest_points=0,
        defence="scan",
    ),
    Cheat(
        "cheat-helper-swap",
        "replaces the comparison helper through the module's dict under a built name",
        REFERENCE,
        with_wrong_power_rule("scalar", code.HELPER_SWAP),
        honest_points=2,
        defence="scan",
    ),
)
