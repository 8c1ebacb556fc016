"""The grading report's modules import each other in one direction only (no circle, not
even one hidden behind ``TYPE_CHECKING``), and its page template ships with the package."""

import ast

from autograder.grading.course.repo_paths import REPO_ROOT

PACKAGE = "autograder.grading.pipeline.report"
FOLDER = REPO_ROOT / "autograder" / "grading" / "pipeline" / "report"


def report_imports() -> dict[str, set[str]]:
    """module -> the report modules it imports anywhere in its source."""
    graph = {}
    for path in FOLDER.glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
                imported.add(node.module.removeprefix(PACKAGE + "."))
        graph[path.stem] = imported
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle, as the modules on it; empty when there is none."""
    state: dict[str, str] = {}

    def visit(module: str, trail: list[str]) -> list[str]:
        state[module] = "open"
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                return [*trail[trail.index(other) :], other] if other in trail else [other]
            if other not in state:
                found = visit(other, [*trail, other])
                if found:
                    return found
        state[module] = "done"
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return []


def test_report_modules_import_without_a_circle():
    graph = report_imports()
    assert {"gather", "html", "figures", "logs", "model"} <= set(graph)
    assert cycle(graph) == []
    assert "gather" not in graph["figures"] | graph["html"] | graph["model"]


def test_the_cycle_finder_finds_a_planted_circle():
    found = cycle({"gather": {"figures"}, "figures": {"model", "gather"}, "model": set()})
    assert found[0] == found[-1] and set(found) == {"gather", "figures"}


def test_the_page_template_is_package_data():
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    assert (FOLDER / "templates" / "report.html").is_file()
    assert f'"{PACKAGE}" = ["templates/*.html"]' in pyproject
