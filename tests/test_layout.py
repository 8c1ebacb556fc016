"""The package's three wings: what a kernel imports never reaches the instructor's tools."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "autograder"
# Modules a student's kernel imports or runs: the package's names, the checks, the kernel's
# side of grading (its launchers too) and the engine.
KERNEL_SIDE = [
    *sorted((PACKAGE / "checks").glob("*.py")),
    *sorted((PACKAGE / "kernel").glob("*.py")),
    *sorted((PACKAGE / "engine").glob("*.py")),
    PACKAGE / "__init__.py",
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
        "import autograder.grading.pipeline.feedback.exporter\n"
        "import autograder.grading.pipeline.feedback.clear_hidden_tests\n"
        "import autograder.grading.pipeline.feedback.hide_tracebacks\n"
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
    third-party library)."""
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


def reexport_only(tree: ast.Module) -> bool:
    """Whether a module's body, after its docstring, is nothing but imports and ``__all__``."""
    body = tree.body[1:] if ast.get_docstring(tree, clean=False) is not None else tree.body
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets = [node.target] if isinstance(node, ast.AnnAssign) else targets
        if not targets or any(getattr(t, "id", None) != "__all__" for t in targets):
            return False
    return True


def imports_from_own_package(tree: ast.Module, package: str) -> bool:
    """Whether any import of ``tree`` (an ``__init__.py`` of ``package``) names a module of
    that package: a relative import, or an absolute one under ``package.``."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (
            node.level > 0 or (node.module or "").startswith(package + ".")
        ):
            return True
        if isinstance(node, ast.Import) and any(
            alias.name.startswith(package + ".") for alias in node.names
        ):
            return True
    return False


def shims(root: Path) -> list[str]:
    """The modules under ``root`` (a package folder) that only stand in for others.

    A module other than ``__init__.py`` whose body, after its docstring, is nothing but
    imports and ``__all__`` is a shim: its names live elsewhere, import them from there.
    An ``__init__.py`` may re-export, since that is a package's public surface, but only
    names of its own package: one that imports something and nothing from its own modules
    stands in for another package. An ``__init__.py`` with a docstring alone is a package
    described, not a shim.
    """
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        if not reexport_only(tree):
            continue
        relative = path.relative_to(root.parent)
        if path.name == "__init__.py":
            package = ".".join(relative.parent.parts)
            imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
            if not imports or imports_from_own_package(tree, package):
                continue
        found.append(str(relative))
    return found


def test_no_module_only_re_exports_another():
    """Is every name imported from where it is defined (no shim, no old import path)?"""
    assert shims(PACKAGE) == []


def test_the_shim_search_sees_planted_shims(tmp_path):
    package = tmp_path / "autograder"
    (package / "wing").mkdir(parents=True)
    (package / "old").mkdir()
    (package / "__init__.py").write_text('"""The package."""\n')
    (package / "wing" / "__init__.py").write_text(
        '"""A wing."""\n\nfrom autograder.wing.part import thing\n\n__all__ = ["thing"]\n'
    )
    (package / "wing" / "part.py").write_text('"""A part."""\n\nthing = 1\n')
    (package / "moved.py").write_text(
        '"""Old path."""\n\nfrom autograder.wing.part import thing\n\n__all__ = ["thing"]\n'
    )
    (package / "old" / "__init__.py").write_text(
        '"""Old package."""\n\nfrom autograder.wing import thing\n'
    )
    assert shims(package) == ["autograder/moved.py", "autograder/old/__init__.py"]


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
    assert {p.name for p in PACKAGE.iterdir()} - shown - {"__pycache__"} == {"engine", "grading"}
    for path in KERNEL_SIDE:
        top = path.relative_to(PACKAGE).parts[0]
        assert top in shown or top == "engine", f"{path} is loaded by kernels but not mounted"
    lent = hidden_parts_of_package(PACKAGE, engine=False)
    assert PACKAGE / "engine" not in lent and PACKAGE / "grading" in lent


# The grading wing's rooms, bottom up: a room imports only rooms below it (or itself).
ROOMS = ("course", "pipeline", "authoring", "assurance", "cli")


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
    """The arrows that point up (or from or into a module of no room)."""
    bad = []
    for path, source, target in arrows:
        if source not in ROOMS or target not in ROOMS:
            bad.append((path, source, target))
        elif ROOMS.index(target) > ROOMS.index(source):
            bad.append((path, source, target))
    return bad


def test_the_grading_wing_has_its_rooms_and_no_arrow_back_up():
    grading = PACKAGE / "grading"
    entries = {p.name.removesuffix(".py") for p in grading.iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__", *ROOMS}
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


# The map of the house in docs/development.md: each room, what it is for, what it may import.
HOUSE_MAP = Path(__file__).parents[1] / "docs" / "development.md"
MAP_ROW = re.compile(r"^\| `([^`]+)` \| [^|]+ \| ([^|]+) \|$")


def house_map(text: str) -> dict[str, set[str]]:
    """Each room of the map (a path under autograder/) -> the rooms it may import."""
    block = text.split("<!-- house map: checked by tests/test_layout.py -->")[1]
    block = block.split("<!-- end of house map -->")[0]
    rooms = {}
    for line in block.splitlines():
        if match := MAP_ROW.match(line.strip()):
            rooms[match.group(1)] = set(re.findall(r"`([^`]+)`", match.group(2)))
    return rooms


def map_room(rooms: dict[str, set[str]], relative: str) -> str | None:
    """The room of the module at ``relative`` (a path under autograder/, or a dotted name's
    path): the longest room that holds it (None: none does)."""
    holding = [
        room
        for room in rooms
        if relative == room.removesuffix(".py")
        or (room.endswith("/") and (relative + "/").startswith(room))
    ]
    return max(holding, key=len, default=None)


def map_breaches(rooms: dict[str, set[str]], package: Path) -> list[str]:
    """Each module outside every room, and each import of a room its row does not name."""
    problems = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix().removesuffix(".py")
        relative = relative.removesuffix("/__init__") if "/" in relative else relative
        source = map_room(rooms, relative)
        if source is None:
            # A folder holding only the rooms below it (grading/) needs no row of its own.
            if path.name != "__init__.py" or any(
                n == "autograder" or n.startswith("autograder.") for n in imported_modules(path)
            ):
                problems.append(f"{relative}: in no room of the map")
            continue
        for name in sorted(imported_modules(path)):
            if name != "autograder" and not name.startswith("autograder."):
                continue
            parts = name.split(".")[1:]
            target = map_room(rooms, "/".join(parts)) if parts else "__init__.py"
            # ``from X import name`` also lists X.name, which may be a name, not a module.
            if target is None and len(parts) > 1:
                target = map_room(rooms, "/".join(parts[:-1]))
            problem = f"{relative} ({source}) imports {target}"
            if target not in (source, None, *rooms[source]) and problem not in problems:
                problems.append(problem)
    return problems


def test_the_map_of_the_house_is_the_house():
    """Does docs/development.md's map list every room that exists, and nothing else, and
    does every import keep to what its room's row allows?"""
    rooms = house_map(HOUSE_MAP.read_text(encoding="utf-8"))
    folders = {
        path.relative_to(PACKAGE).as_posix() + "/"
        for path in PACKAGE.rglob("*")
        if path.is_dir() and any(path.glob("*.py"))
    }
    assert {room for room in rooms if room.endswith("/")} <= folders, "a room that is gone"
    for room, allowed in rooms.items():
        assert allowed - {"-"} <= set(rooms), f"{room} may import an unknown room: {allowed}"
    assert map_breaches(rooms, PACKAGE) == []


def test_the_map_check_sees_a_planted_breach(tmp_path):
    """Would the check notice an import its room may not make, and a folder with no room?"""
    rooms = {"low/": set(), "high/": {"low/"}}
    for folder, code in {
        "low": "from autograder.high.top import x\n",  # up: low may import nothing
        "high": "from autograder.low.base import y\n",  # down: allowed
        "stray": "import numpy\n",  # a folder with no row
    }.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "mod.py").write_text(code)
    assert map_breaches(rooms, tmp_path) == [
        "low/mod (low/) imports high/",
        "stray/mod: in no room of the map",
    ]
