"""A class on this machine: Unix accounts for an instructor and students, the exchange, the
students' kit-only environment and the instructor's course root, all removed afterwards.

Students must not read the answers: the repository (solutions/, the reference engine, the
gradebooks) is closed to other users while the class exists, the instructor's home (course
root, gradebook, environment) is private, and students run only the kit environment.
"""

import contextlib
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.authoring.hub.accounts import (
    Account,
    create_account,
    create_group,
    new_password,
    refuse_existing_user,
    remove_account,
    remove_group,
    require_root,
    run_suffix,
)
from autograder.grading.authoring.hub.environments import (
    instructor_environment,
    shared_interpreter,
    student_environment,
)
from autograder.grading.authoring.hub.exchange import (
    course_root,
    make_exchange,
    student_work_folder,
    write_user_settings,
)
from autograder.grading.authoring.hub.hub_config import write_student_profile
from autograder.grading.authoring.kit_wheel import build_wheel
from autograder.grading.course.repo_paths import REPO_ROOT

INSTRUCTOR_ENVIRONMENT = ".autograd-course-env"  # in the instructor's (private) home


@dataclass
class Classroom:
    """Everything a class needs on this machine, and where it is."""

    folder: Path  # shared (readable by all): the exchange, the students' environment, profile
    group: str  # the class's Unix group: its members alone may enter the exchange
    instructor: Account
    students: list[Account]
    exchange: Path
    course_root: Path
    student_python: Path
    instructor_python: Path
    student_profile: Path
    library_path: str  # LD_LIBRARY_PATH the environments' python needs ("" for none)
    work_folders: dict[str, Path] = field(default_factory=dict)

    @property
    def accounts(self) -> list[Account]:
        return [self.instructor, *self.students]


@contextlib.contextmanager
def closed_repository(repo: Path = REPO_ROOT) -> Iterator[bool]:
    """Meanwhile, other users cannot open the repository at all (its folder loses the
    permissions of others); the mode is put back afterwards. Yields whether it changed."""
    mode = stat.S_IMODE(repo.stat().st_mode)
    closed = mode & ~0o007
    if closed != mode:
        repo.chmod(closed)
    try:
        yield closed != mode
    finally:
        if closed != mode:
            repo.chmod(mode)


def account_names(students: int, suffix: str) -> tuple[str, list[str]]:
    """The instructor's and the students' user names of one run."""
    return f"ag-teach-{suffix}", [f"ag-stu{n}-{suffix}" for n in range(1, students + 1)]


def group_name(suffix: str) -> str:
    """The class's Unix group of one run."""
    return f"ag-class-{suffix}"


@contextlib.contextmanager
def classroom(
    students: int,
    assignments: list[str],
    password: str | None = None,
    log=print,
    suffix: str | None = None,
) -> Iterator[Classroom]:
    """Make the class (accounts, exchange, environments, course root) and remove it all
    afterwards, also when something fails half-way; only what it made: an account or group
    that existed already is refused, never removed. ``suffix``: of the names (random)."""
    require_root()
    folder = Path(tempfile.mkdtemp(prefix="autograd-hub-"))
    folder.chmod(0o755)
    made: list[str] = []  # accounts
    groups: list[str] = []
    try:
        with closed_repository() as closed:
            if closed:
                log(f"closed {REPO_ROOT} to other users meanwhile (students must not read it)")
            suffix = suffix or run_suffix()
            yield _build(folder, students, assignments, password, suffix, made, groups, log)
    finally:
        for name in made:
            remove_account(name)
        for name in groups:
            remove_group(name)
        shutil.rmtree(folder, ignore_errors=True)


def _build(
    folder: Path,
    students: int,
    assignments: list[str],
    password: str | None,
    suffix: str,
    made: list[str],
    groups: list[str],
    log,
) -> Classroom:
    group = group_name(suffix)
    gid = create_group(group)
    groups.append(group)
    instructor_name, student_names = account_names(students, suffix)
    accounts = []
    for name in [instructor_name, *student_names]:
        refuse_existing_user(name)  # before it is recorded as this class's, to be removed
        made.append(name)
        accounts.append(create_account(name, password or new_password(), (group,)))
    instructor, pupils = accounts[0], accounts[1:]
    exchange = make_exchange(folder / "class-only", gid)
    log(f"accounts: {', '.join(a.name for a in accounts)}; exchange {exchange}")

    wheel = build_wheel(folder / "kit")
    base, library_path = shared_interpreter(folder / "python")
    student_python = student_environment(folder / "student-env", wheel, base, library_path)
    profile = write_student_profile(folder / "student-profile")
    instructor_python = instructor_environment(
        instructor.home / INSTRUCTOR_ENVIRONMENT, base, library_path
    )
    log("environments: students' (kit only) and instructor's made")

    root = course_root(instructor.home, exchange, assignments, instructor.uid, instructor.gid)
    work = {s.name: student_work_folder(s.home, s.uid, s.gid) for s in pupils}
    for student in pupils:
        write_user_settings(student.home, exchange, student.uid, student.gid, work[student.name])
    write_user_settings(instructor.home, exchange, instructor.uid, instructor.gid, course_root=root)
    return Classroom(
        folder, group, instructor, pupils, exchange, root, student_python, instructor_python,
        profile, library_path, work,
    )  # fmt: skip
