"""One gradebook per course, whichever folder a process runs in: the formgrader's server
runs in the instructor's home while the commands run in the course root, and both must open
the course root's gradebook.db (a relative db_url sent the formgrader to ~/gradebook.db, an
empty gradebook, while the CLI graded into ~/course/gradebook.db)."""

import os
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from autograder.grading.authoring.hub.exchange import course_root, user_settings
from autograder.grading.course.course_root import load_course
from autograder.grading.course.nbgrader_workspace import create_workspace


def gradebook_seen_from(folder: Path, *configs: Path) -> str:
    """The db_url nbgrader's CourseDirectory resolves with ``configs`` loaded in order, in a
    process whose current folder is ``folder`` (as a Jupyter server or command would)."""
    config = Config()
    for path in configs:
        config.merge(PyFileConfigLoader(path.name, path=str(path.parent)).load_config())
    here = os.getcwd()
    os.chdir(folder)
    try:
        return CourseDirectory(config=config).db_url
    finally:
        os.chdir(here)


def hub_instructor(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, course root, the user's own nbgrader settings) as the hub makes them."""
    home = tmp_path / "home" / "teacher"
    home.mkdir(parents=True)
    exchange = tmp_path / "exchange"
    root = course_root(home, exchange, ["00-recipe"], os.getuid(), os.getgid())
    settings = home / ".jupyter" / "nbgrader_config.py"
    settings.parent.mkdir()
    settings.write_text(user_settings(exchange, course_root=root))
    return home, root, settings


def test_the_formgrader_in_the_home_opens_the_course_roots_gradebook(tmp_path):
    home, root, settings = hub_instructor(tmp_path)
    expected = f"sqlite:///{root / 'gradebook.db'}"
    # The formgrader: a server in the home, reading the user's settings (root=~/course).
    assert gradebook_seen_from(home, root / "nbgrader_config.py", settings) == expected
    # A command run in the course root, and this package's view of the course.
    assert gradebook_seen_from(root, root / "nbgrader_config.py") == expected
    assert load_course(root).db_url == expected


def test_a_relative_gradebook_setting_would_split_them(tmp_path):
    """The bug the default avoids, planted: a relative db_url follows the current folder."""
    home, root, settings = hub_instructor(tmp_path)
    planted = root / "nbgrader_config.py"
    planted.write_text(planted.read_text() + 'c.CourseDirectory.db_url = "sqlite:///gradebook.db"\n')
    assert gradebook_seen_from(home, planted, settings) == "sqlite:///gradebook.db"


def test_a_workspace_and_its_copy_each_keep_their_own_gradebook(tmp_path):
    course = create_workspace(tmp_path / "first")
    first = course.root
    assert course.db_url == f"sqlite:///{first / 'gradebook.db'}"
    assert gradebook_seen_from(tmp_path, first / "nbgrader_config.py").endswith(
        f"{tmp_path.resolve()}/gradebook.db"
    ), "a workspace's config moves the course to the folder nbgrader runs in"
