"""The student's lab: a working copy that never loses edits, and the student profile's settings."""

import os

from autograder.grading.authoring.student_lab import (
    PROFILE_DIR,
    WorkCopy,
    lab_environment,
    update_work_copy,
)


def release(course, notebooks: dict[str, str]) -> None:
    """Write a small course release: folder/notebook.ipynb -> text."""
    for name, text in notebooks.items():
        path = course / name / f"{name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_second_copy_keeps_edits_and_brings_new_notebooks(tmp_path):
    course, work = tmp_path / "course", tmp_path / "work"
    release(course, {"00-recipe": "blank 00", "01-worked-example": "blank 01"})
    (course / "00-recipe" / ".ipynb_checkpoints").mkdir()
    (course / "00-recipe" / ".ipynb_checkpoints" / "x.ipynb").write_text("checkpoint")

    first = update_work_copy(course, work)
    assert [str(p) for p in first.copied] == [
        "00-recipe/00-recipe.ipynb",
        "01-worked-example/01-worked-example.ipynb",
    ]
    assert first.differ == []
    assert not (work / "00-recipe" / ".ipynb_checkpoints").exists()

    # The student answers in 00; the course then fixes 00 and adds 02.
    (work / "00-recipe" / "00-recipe.ipynb").write_text("my answers")
    release(course, {"00-recipe": "fixed 00", "02-how-it-works": "blank 02"})

    second = update_work_copy(course, work)
    assert (work / "00-recipe" / "00-recipe.ipynb").read_text() == "my answers"
    assert (work / "02-how-it-works" / "02-how-it-works.ipynb").read_text() == "blank 02"
    assert [str(p) for p in second.copied] == ["02-how-it-works/02-how-it-works.ipynb"]
    assert [str(p) for p in second.differ] == ["00-recipe/00-recipe.ipynb"]
    summary = second.summary()
    assert "yours kept" in summary and "00-recipe/00-recipe.ipynb" in summary
    assert "rename or delete it in work/" in summary


def test_unchanged_copy_reports_nothing_to_do(tmp_path):
    course, work = tmp_path / "course", tmp_path / "work"
    release(course, {"00-recipe": "blank 00"})
    update_work_copy(course, work)
    again = update_work_copy(course, work)
    assert again == WorkCopy(work)
    assert again.summary() == f"working copy: {work}"


def test_lab_environment_draws_inline_and_reads_the_student_profile_first():
    env = lab_environment({"MPLBACKEND": "Agg", "JUPYTER_CONFIG_PATH": "/elsewhere"})
    assert "MPLBACKEND" not in env  # the kernel's default: matplotlib's inline backend
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [str(PROFILE_DIR), "/elsewhere"]
    assert env["JUPYTER_PREFER_ENV_PATH"] == "1"


def test_student_profile_disables_instructor_tools_and_news(monkeypatch, tmp_path):
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager
    from jupyterlab_server.config import get_page_config

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(PROFILE_DIR))
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "1")
    disabled = get_page_config([], str(tmp_path))["disabledExtensions"]
    assert "@jupyter/nbgrader" in disabled
    assert "@jupyterlab/apputils-extension:announcements" in disabled
    # The server side: nbgrader's handlers (formgrader at /formgrader...) are not loaded.
    manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
    enabled = manager.get_jpserver_extensions()
    nbgrader = {name: on for name, on in enabled.items() if name.startswith("nbgrader")}
    assert nbgrader and not any(nbgrader.values()), nbgrader


def test_the_spanish_edition_has_its_own_release_and_working_copy():
    from autograder.grading.authoring.student_lab import WORK_DIR, edition_folders, take_edition
    from autograder.grading.course.repo_paths import COURSE_DIR, REPO_ROOT

    assert take_edition(["--edition", "es", "--port=9999"]) == ("es", ["--port=9999"])
    assert take_edition(["--edition=es"]) == ("es", [])
    assert take_edition(["--copy-only"]) == ("en", ["--copy-only"])
    assert edition_folders("en") == (COURSE_DIR, WORK_DIR)
    course, work = edition_folders("es")
    assert course == REPO_ROOT / "course-es" and work == REPO_ROOT / "work-es"
    assert sorted(p.name for p in course.iterdir()) == sorted(p.name for p in COURSE_DIR.iterdir())
