"""The student's JupyterLab (``make lab``): a working copy of the course and a student profile.

Students type into ``work/`` (git-ignored), never into the committed release ``course/``:
each launch copies the notebooks that ``work/`` lacks and leaves every existing file alone,
reporting the ones that differ from the release. JupyterLab runs with the profile in
``student-lab/`` (nbgrader's instructor extensions and the news prompt off) and without a
forced matplotlib backend, so the kernel draws figures inline.
"""

import filecmp
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.course.repo_paths import COURSE_DIR, REPO_ROOT

WORK_DIR = REPO_ROOT / "work"
# ``--edition es`` (``make lab EDITION=es``): the Spanish release course-es/, copied into its
# own working folder work-es/ (the notebooks have the same names as the English ones).
EDITION_OPTION = "--edition"
# Jupyter config read before the user's and the environment's (JUPYTER_CONFIG_PATH): it only
# disables things, and JupyterLab keeps the user's own settings in their usual place.
PROFILE_DIR = REPO_ROOT / "student-lab"


@dataclass
class WorkCopy:
    """What one copy step did: files copied, and existing files that differ from the release."""

    work: Path
    copied: list[Path] = field(default_factory=list)
    differ: list[Path] = field(default_factory=list)

    def summary(self) -> str:
        """Lines for the terminal: what arrived, what differs, how to get a fresh copy."""
        lines = [f"working copy: {self.work}"]
        if self.copied:
            lines.append("  new from the course:")
            lines.extend(f"    {path}" for path in self.copied)
        if self.differ:
            lines.append("  yours kept (it differs from the course's):")
            lines.extend(f"    {path}" for path in self.differ)
            lines.append(
                "  for a fresh copy of one, rename or delete it in work/ and run make lab again"
            )
        return "\n".join(lines)


def course_files(course: Path) -> list[Path]:
    """The release's files (paths relative to ``course``), without hidden files or caches."""
    return sorted(
        path.relative_to(course)
        for path in course.rglob("*")
        if path.is_file()
        and not any(
            part.startswith(".") or part == "__pycache__" for part in path.relative_to(course).parts
        )
    )


def update_work_copy(course: Path = COURSE_DIR, work: Path = WORK_DIR) -> WorkCopy:
    """Copy into ``work`` the course files it lacks; never overwrite one that is there."""
    result = WorkCopy(work)
    for relative in course_files(course):
        target = work / relative
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(course / relative, target)
            result.copied.append(relative)
        elif not filecmp.cmp(course / relative, target, shallow=False):
            result.differ.append(relative)
    return result


def lab_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for the student's server and kernels: the profile, no forced backend."""
    env = dict(os.environ if base is None else base)
    # Unset, ipykernel picks matplotlib's inline backend; Agg (set for headless runs)
    # would make plt.show() draw nothing in the notebook.
    env.pop("MPLBACKEND", None)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        [str(PROFILE_DIR), *filter(None, [env.get("JUPYTER_CONFIG_PATH")])]
    )
    # This environment's kernelspec before one in the user's home folder.
    env["JUPYTER_PREFER_ENV_PATH"] = "1"
    return env


def lab_command(work: Path, extra: Sequence[str] = ()) -> list[str]:
    """``jupyter lab`` of this environment on ``work``; --allow-root where run as root."""
    command = [str(Path(sys.executable).parent / "jupyter"), "lab", f"--ServerApp.root_dir={work}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers run as root
    return [*command, *extra]


def edition_folders(language: str) -> tuple[Path, Path]:
    """(release, working copy) of an edition: course/ and work/ for English, else
    course-<lang>/ and work-<lang>/."""
    if language == "en":
        return COURSE_DIR, WORK_DIR
    from autograder.grading.authoring.i18n.edition import edition

    return edition(language).course, REPO_ROOT / f"work-{language}"


def take_edition(arguments: list[str]) -> tuple[str, list[str]]:
    """The ``--edition LANG`` (or ``--edition=LANG``) of the arguments, and the others."""
    language, rest = "en", []
    iterator = iter(arguments)
    for argument in iterator:
        if argument == EDITION_OPTION:
            language = next(iterator, "")
        elif argument.startswith(EDITION_OPTION + "="):
            language = argument.partition("=")[2]
        else:
            rest.append(argument)
    if not language:
        raise SystemExit(f"{EDITION_OPTION} needs a language: en or es")
    return language, rest


def main(argv: Sequence[str] | None = None) -> int:
    """Update the working copy, then replace this process with the student's JupyterLab.

    ``--copy-only`` stops after the copy; ``--edition es`` opens the Spanish edition (its
    own working copy, work-es/); any other arguments go to ``jupyter lab``.
    """
    language, extra = take_edition(list(sys.argv[1:] if argv is None else argv))
    try:
        course, work = edition_folders(language)
    except ValueError as error:
        raise SystemExit(f"{EDITION_OPTION} {language}: {error}") from None
    copy = update_work_copy(course, work)
    print(copy.summary(), flush=True)
    if "--copy-only" in extra:
        return 0
    command = lab_command(work, extra)
    os.chdir(work)
    os.execve(command[0], command, lab_environment())
    return 0  # not reached: execve replaces the process


if __name__ == "__main__":
    sys.exit(main())
