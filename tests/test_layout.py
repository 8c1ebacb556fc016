"""The package's three wings: what a kernel imports never reaches the instructor's tools."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "autograder"
# Modules a student's kernel imports: the checks, the engine and the old import paths that
# committed notebooks and existing gradebooks still name.
KERNEL_SIDE = [
    *sorted((PACKAGE / "checks").glob("*.py")),
    *sorted((PACKAGE / "kernel").glob("*.py")),
    *sorted((PACKAGE / "engine").glob("*.py")),
    PACKAGE / "__init__.py",
    PACKAGE / "grading_seed.py",
    PACKAGE / "progress.py",
    PACKAGE / "graphs.py",
]


def imported_modules(path: Path) -> set[str]:
    """Every module named by an import statement in ``path`` (absolute imports only)."""
    return imported_modules_in(path.read_text(), str(path))


def imported_modules_in(source: str, filename: str = "<cell>") -> set[str]:
    """Every module named by an import statement in ``source`` (``from X import Y`` gives X
    and X.Y; absolute imports only)."""
    names = set()
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def reaches_grading(names: set[str]) -> list[str]:
    return sorted(
        n for n in names if n == "autograder.grading" or n.startswith("autograder.grading.")
    )


@pytest.mark.parametrize("path", KERNEL_SIDE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_kernel_side_modules_never_import_grading(path):
    """Does a module the kernel loads import the instructor's wing?"""
    bad = reaches_grading(imported_modules(path))
    assert not bad, f"{path.relative_to(PACKAGE)} imports {bad}: kernel code must not"


def test_the_direction_check_sees_a_planted_import(tmp_path):
    """Would the check notice a checks module that imports grading (a planted bug)?"""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from autograder.grading.pipeline.report import write_report\nimport numpy\n"
    )
    assert reaches_grading(imported_modules(planted)) == [
        "autograder.grading.pipeline.report",
        "autograder.grading.pipeline.report.write_report",
    ]


def test_importing_what_notebooks_import_loads_nothing_from_grading():
    """At run time too: a notebook's imports leave ``autograder.grading`` unloaded."""
    code = (
        "import sys\n"
        "from autograder import check_array, check_flags, check_parity, check_raises_like\n"
        "from autograder import hidden_rng, show_progress, side_by_side, check_graph_like\n"
        "from autograder import Exercises, reference_methods, in_student_kernel\n"
        "from autograder.grading_seed import hidden_rng\n"
        "from autograder.progress import show_progress\n"
        "from autograder.graphs import check_graph_like, draw_graphs\n"
        "import autograder.engine.tensor, autograder.engine.capstone\n"
        "print(sorted(m for m in sys.modules if m.split('.')[:2] == ['autograder', 'grading']))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_instructors_commands_do_not_import_torch():
    """The command line, nbgrader's course config and a grading worker's module leave torch
    unloaded: importing it cost every instructor command and every nbgrader run a second."""
    code = (
        "import sys\n"
        "from autograder.grading.cli import main\n"
        "try:\n"
        "    main(['similarity', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "import autograder.grading.pipeline.feedback_exporter\n"
        "import autograder.grading.pipeline.preprocessors.clear_hidden_tests\n"
        "import autograder.grading.pipeline.preprocessors.hide_tracebacks\n"
        "import autograder.grading.pipeline.autograde.cluster.dask_worker\n"
        "import autograder.grading.assurance.demo\n"
        "loaded = 'torch' in sys.modules, 'autograder.checks.parity' in sys.modules\n"
        "print(*loaded, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "False False", out.stderr


def test_every_notebook_helper_is_named_by_the_package():
    """``from autograder import *`` and tab completion offer each helper; a name the package
    lacks is an AttributeError naming it."""
    import autograder

    namespace: dict = {}
    exec("from autograder import *", namespace)
    assert set(autograder.LAZY) <= set(namespace) and set(autograder.LAZY) <= set(dir(autograder))
    with pytest.raises(AttributeError, match="no attribute 'check_parrity'"):
        autograder.check_parrity  # noqa: B018


def test_notebooks_import_everything_from_one_path():
    """Every import of the course's notebooks is ``from autograder import ...`` (or of a
    third-party library): the old paths stay for existing gradebooks only."""
    import json

    from autograder.grading.course.repo_paths import SOLUTIONS_DIR

    found = set()
    for path in SOLUTIONS_DIR.glob("*/*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                found |= {m for m in imported_modules_in(source, path.name) if "autograder" in m}
    import autograder

    assert {m.split(".")[0] + "." + m.split(".")[1] for m in found if m.count(".")} <= {
        f"autograder.{name}" for name in autograder.__all__
    }, sorted(found)


def test_old_import_paths_name_the_same_objects():
    """Do the re-export modules hand out the moved objects themselves, not copies?"""
    import autograder.checks.graph_drawing
    import autograder.checks.progress
    import autograder.checks.seed
    import autograder.feedback
    import autograder.grading.pipeline.preprocessors
    import autograder.grading_seed
    import autograder.graphs
    import autograder.progress

    assert autograder.grading_seed.hidden_rng is autograder.checks.seed.hidden_rng
    assert autograder.progress.show_progress is autograder.checks.progress.show_progress
    assert autograder.graphs.draw_graphs is autograder.checks.graph_drawing.draw_graphs
    assert (
        autograder.feedback.HideHiddenTestTracebacks
        is autograder.grading.pipeline.preprocessors.HideHiddenTestTracebacks
    )
    # existing courses' nbgrader_config.py name the grading wing's rooms as they were
    import autograder.grading.feedback_exporter
    import autograder.grading.i18n.feedback
    import autograder.grading.preprocessors.clear_hidden_tests
    import autograder.grading.preprocessors.hide_tracebacks
    from autograder.grading.authoring.i18n import feedback
    from autograder.grading.pipeline import feedback_exporter, preprocessors

    old = autograder.grading.preprocessors
    assert old.clear_hidden_tests.ClearHiddenTestsInTestCells is (
        preprocessors.ClearHiddenTestsInTestCells
    )
    assert old.hide_tracebacks.HideHiddenTestTracebacks is preprocessors.HideHiddenTestTracebacks
    assert autograder.grading.feedback_exporter.FeedbackExporter is (
        feedback_exporter.FeedbackExporter
    )
    assert autograder.grading.i18n.feedback.LocalizedFeedbackExporter is (
        feedback.LocalizedFeedbackExporter
    )


def test_the_sandbox_shows_a_grading_kernel_exactly_the_kernel_wings():
    """No exception list: the sandbox mounts the kernel wings whole and nothing else of the
    package, and every module a kernel loads (the reference engine aside) lies in them."""
    from autograder.grading.pipeline.autograde.job.sandbox import (
        KERNEL_WINGS,
        hidden_parts_of_package,
    )

    hidden = hidden_parts_of_package(PACKAGE)
    shown = {entry.name for entry in PACKAGE.iterdir() if entry not in hidden}
    assert shown == set(KERNEL_WINGS)
    assert "grading" not in shown and "engine" not in shown
    assert {p.name for p in PACKAGE.iterdir()} - shown - {"__pycache__"} == {
        "engine",
        "feedback.py",
        "grading",
    }
    for path in KERNEL_SIDE:
        top = path.relative_to(PACKAGE).parts[0]
        assert top in shown or top == "engine", f"{path} is loaded by kernels but not mounted"
    lent = hidden_parts_of_package(PACKAGE, engine=False)
    assert PACKAGE / "engine" not in lent and PACKAGE / "grading" in lent


# The grading wing's rooms, bottom up: a room imports only rooms below it (or itself).
ROOMS = ("course", "pipeline", "authoring", "assurance", "cli")
# Old import paths kept for existing courses' nbgrader_config.py: each names its new home.
OLD_PATHS = ("feedback_exporter", "preprocessors", "i18n")


def room_arrows() -> list[tuple[str, str, str]]:
    """(module file, its room, the room it imports) for every import between grading rooms."""
    grading = PACKAGE / "grading"
    arrows = []
    for path in sorted(grading.rglob("*.py")):
        parts = path.relative_to(grading).parts
        source = parts[0].removesuffix(".py")
        for name in imported_modules(path):
            target = name.split(".")[2] if name.startswith("autograder.grading.") else None
            if target and target != source:
                arrows.append((str(path.relative_to(PACKAGE)), source, target))
    return arrows


def arrows_up(arrows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The arrows that point up (or into an old path, or from a module of no room)."""
    bad = []
    for path, source, target in arrows:
        if source in OLD_PATHS and target in ROOMS:
            continue
        if source not in ROOMS or target not in ROOMS:
            bad.append((path, source, target))
        elif ROOMS.index(target) > ROOMS.index(source):
            bad.append((path, source, target))
    return bad


def test_the_grading_wing_has_its_rooms_and_no_arrow_back_up():
    grading = PACKAGE / "grading"
    entries = {p.name.removesuffix(".py") for p in grading.iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__", *ROOMS, *OLD_PATHS}
    arrows = room_arrows()
    assert arrows and arrows_up(arrows) == []


def test_an_arrow_back_up_is_named():
    planted = [("grading/course/scores.py", "course", "pipeline")]
    planted += [("grading/pipeline/x.py", "pipeline", "feedback_exporter")]
    assert arrows_up(planted) == planted


# A tool the project ships or resolves (system_tools, the sandbox's find_bwrap), found by
# name or by a fixed path instead: such a test passes only where that path exists.
TOOL_BY_NAME = re.compile(
    r"""shutil\.which\(\s*["'](bwrap|chromium|initdb|pg_ctl|node|npm)["']"""
    r"""|["']/usr/(s?bin|lib/postgresql)/(bwrap|chromium|[^"']*initdb)"""
)


def tools_found_by_name(source: str) -> list[str]:
    """Each place in ``source`` that finds a resolved tool by name or fixed path."""
    return [match.group(0) for match in TOOL_BY_NAME.finditer(source)]


def test_tests_find_tools_through_the_projects_resolvers():
    """Does any test find bwrap, Chromium, PostgreSQL or node other than through the
    resolvers that grading and `autograd-course doctor` use?"""
    tests = Path(__file__).parent
    found = {
        str(path.relative_to(tests)): hits
        for path in sorted(tests.rglob("*.py"))
        if path.name != "test_layout.py" and (hits := tools_found_by_name(path.read_text()))
    }
    assert not found, f"use system_tools / sandbox.find_bwrap instead: {found}"


def test_the_tool_search_sees_planted_lookups():
    # Built from pieces so that this file holds no such lookup itself (the search skips it,
    # other repository checks do not).
    by_name, by_path = "shutil.which(" + '"bwrap"', '"/usr/bin/' + "chromium"
    planted = f'a = {by_name})\nb = Path({by_path}")\nc = which("node")'
    assert tools_found_by_name(planted) == [by_name, by_path]


# Inside pipeline/: the rooms of autograde/, each with the rooms of autograde/ it may import.
# The run (autograde/'s own modules) reaches down to all; the cluster runs jobs; a job and
# the intake stand alone; verdicts/, which a job's kernels use, imports none of it.
AUTOGRADE = PACKAGE / "grading" / "pipeline" / "autograde"
VERDICTS = PACKAGE / "grading" / "pipeline" / "verdicts"
AUTOGRADE_ROOMS = ("job", "intake", "cluster")
MAY_IMPORT = {
    "run": {"run", *AUTOGRADE_ROOMS},
    "cluster": {"cluster", "job"},
    "job": {"job"},
    "intake": {"intake"},
    "verdicts": set(),
}


def autograde_room(name: str) -> str | None:
    """The room of autograde/ that the module ``name`` lies in (None: outside autograde/)."""
    package = "autograder.grading.pipeline.autograde"
    if name != package and not name.startswith(package + "."):
        return None
    inner = name.removeprefix(package).lstrip(".").split(".")[0]
    return inner if inner in AUTOGRADE_ROOMS else "run"


def floor_breaches(room: str, names: set[str]) -> list[str]:
    """The modules of ``names`` in a room of autograde/ that ``room`` may not import."""
    return sorted(
        name
        for name in names
        if (target := autograde_room(name)) is not None and target not in MAY_IMPORT[room]
    )


def room_of(path: Path) -> str:
    """The room of a module file of autograde/ or verdicts/."""
    if VERDICTS in path.parents:
        return "verdicts"
    first = path.relative_to(AUTOGRADE).parts[0]
    return first if first in AUTOGRADE_ROOMS else "run"


def test_autograde_has_its_rooms_and_each_imports_only_down():
    folders = {p.name for p in AUTOGRADE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(AUTOGRADE_ROOMS)
    modules = [*sorted(AUTOGRADE.rglob("*.py")), *sorted(VERDICTS.rglob("*.py"))]
    breaches = {
        str(path.relative_to(PACKAGE)): bad
        for path in modules
        if (bad := floor_breaches(room_of(path), imported_modules(path)))
    }
    assert not breaches, breaches


@pytest.mark.parametrize(
    ("room", "planted"),
    [
        ("job", "from autograder.grading.pipeline.autograde.log import GradingRecord"),
        ("job", "from autograder.grading.pipeline.autograde import autograde"),
        ("job", "from autograder.grading.pipeline.autograde.cluster.processes import x"),
        ("intake", "import autograder.grading.pipeline.autograde.run"),
        ("intake", "from autograder.grading.pipeline.autograde.cluster import dask_cluster"),
        ("cluster", "from autograder.grading.pipeline.autograde.intake.zip_collect import x"),
        ("cluster", "from autograder.grading.pipeline.autograde.jobs import RunFiles"),
        ("verdicts", "from autograder.grading.pipeline.autograde.job.sandbox import x"),
        ("verdicts", "from autograder.grading.pipeline.autograde import STATUSES"),
    ],
)
def test_a_floor_breach_inside_pipeline_is_seen(tmp_path, room, planted):
    """Would each floor's check notice a planted import that runs back up (or across)?"""
    path = tmp_path / "planted.py"
    path.write_text(f"import numpy\n{planted}\nfrom autograder.grading.course import term\n")
    breaches = floor_breaches(room, imported_modules(path))
    assert breaches and all("pipeline.autograde" in name for name in breaches), breaches
    fine = "from autograder.grading.pipeline.autograde.job.spec import JobSpec"
    assert floor_breaches("cluster", imported_modules_in(fine)) == []
