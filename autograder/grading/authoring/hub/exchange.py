"""nbgrader's exchange for the class: the shared folder, each user's course settings and the
instructor's course root.

The exchange is one folder writable by all, as nbgrader's release creates it (mode 0777,
plus the sticky bit so nobody removes another's course folder), inside a folder that only
the class's Unix group may enter; nbgrader itself makes the
course's outbound (readable by all), inbound (writable, not listable) and feedback (not
listable) folders inside. Every user names the course and the exchange in their own
``~/.jupyter/nbgrader_config.py``; the instructor's course root loads the repository's
nbgrader settings (the course's preprocessors and feedback pages) with its own folders.
"""

import os
import shutil
from pathlib import Path

from autograder.grading.course.repo_paths import NBGRADER_CONFIG, SOLUTIONS_DIR
from autograder.grading.course.term import TERM_FILE

COURSE_ID = "autograd-course"
COURSE_FOLDER = "course"  # in the instructor's home: nbgrader's course root
WORK_FOLDER = "autograd-course"  # in a student's home: where assignments are fetched
# nbgrader's submit with the hand-in closed to the rest of the class (private_submit.py, as
# the students' environment has it).
PRIVATE_SUBMIT_CLASS = "autograd_hub_submit.PrivateSubmit"


def make_exchange(gate: Path, class_gid: int) -> Path:
    """The exchange folder, writable by all with the sticky bit as nbgrader wants it, inside
    ``gate``: a folder that only the class's group may enter, so that a user of the machine
    outside the course can neither fetch nor submit (nbgrader's own exchange lets anyone)."""
    gate.mkdir(parents=True, exist_ok=True)
    os.chown(gate, 0, class_gid)
    gate.chmod(0o750)
    folder = gate / "exchange"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o1777)
    return folder


def user_settings(
    exchange: Path,
    course_id: str = COURSE_ID,
    assignment_dir: Path | None = None,
    course_root: Path | None = None,
) -> str:
    """A user's nbgrader_config.py: which course they take or teach, where the exchange is
    and, for a student, the folder their assignments are fetched into and submitted from, for
    the instructor, the course root the formgrader shows (nbgrader's default for both, ".",
    is the folder the server process runs in: the home, not the server's root folder)."""
    work = ""
    if assignment_dir:  # a student: their folder, and a hand-in only the instructors can open
        work += f"c.Exchange.assignment_dir = {str(assignment_dir)!r}\n"
        work += f"c.ExchangeFactory.submit = {PRIVATE_SUBMIT_CLASS!r}\n"
    if course_root:
        work += f"c.CourseDirectory.root = {str(course_root)!r}\n"
    return (
        "# Written by autograd-course hub: the course this user is in and nbgrader's exchange.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        f"{work}"
    )


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give ``path`` and everything under it to the user (files made as root for them)."""
    os.chown(path, uid, gid)
    for folder, subfolders, files in os.walk(path):
        for name in subfolders + files:
            os.chown(Path(folder) / name, uid, gid, follow_symlinks=False)


def write_user_settings(
    home: Path,
    exchange: Path,
    uid: int,
    gid: int,
    assignment_dir: Path | None = None,
    course_root: Path | None = None,
) -> Path:
    """``~/.jupyter/nbgrader_config.py`` for one user, owned by them."""
    config = home / ".jupyter" / "nbgrader_config.py"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(user_settings(exchange, COURSE_ID, assignment_dir, course_root))
    chown_tree(config.parent, uid, gid)
    return config


def student_work_folder(home: Path, uid: int, gid: int) -> Path:
    """The student's working folder in their home: their server opens there."""
    work = home / WORK_FOLDER
    work.mkdir(exist_ok=True)
    os.chown(work, uid, gid)
    return work


def course_root(home: Path, exchange: Path, assignments: list[str], uid: int, gid: int) -> Path:
    """The instructor's nbgrader course root in their home: the repository's settings and
    term (term.toml, whose due dates decide which release may go out), with source/ (a copy
    of solutions/), release/ and the exchange; the gradebook comes with ``nbgrader
    generate_assignment``."""
    root = home / COURSE_FOLDER
    root.mkdir(exist_ok=True)
    settings = NBGRADER_CONFIG.read_text()
    (root / "nbgrader_config.py").write_text(
        settings
        + "\n# The hub's course root (autograd-course hub): nbgrader's folders, the exchange.\n"
        + 'c.CourseDirectory.source_directory = "source"\n'
        + 'c.CourseDirectory.release_directory = "release"\n'
        + f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        + f"c.Exchange.root = {str(exchange)!r}\n"
    )
    if not (root / TERM_FILE.name).exists():
        shutil.copyfile(TERM_FILE, root / TERM_FILE.name)
    ignore = shutil.ignore_patterns(".*", "__pycache__")
    for assignment in assignments:
        target = root / "source" / assignment
        if not target.exists():
            shutil.copytree(SOLUTIONS_DIR / assignment, target, ignore=ignore)
    chown_tree(root, uid, gid)
    return root
