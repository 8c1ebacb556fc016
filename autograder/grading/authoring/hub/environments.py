"""The Python environments the hub's users run, built beside this one without copying torch.

Students' servers run a kit-only environment: the student kit's wheel, the third-party
packages its kernel needs, JupyterLab, nbgrader (for the Assignments tab and Validate) and
jupyterhub's single-user server, nothing of the course's repository. The instructor's runs
everything, the ``autograder`` package included, in a folder only they can read. Packages
come from this environment as hard links (same file system) or copies: symbolic links would
point into the repository, which students must not be able to open at all.
"""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement

import autograder

# What a student's server imports: the kernel's libraries, JupyterLab with nbgrader's
# student side, and the single-user server that JupyterHub starts.
STUDENT_DISTRIBUTIONS = (
    "numpy", "torch", "matplotlib", "ipython", "ipykernel", "jupyterlab", "nbgrader",
    "jupyterhub",
)  # fmt: skip
COURSE_DISTRIBUTION = "autograd-course"
PACKAGE_ROOT = Path(autograder.__file__).resolve().parent  # the autograder package
# nbgrader's submit with the hand-in closed to the class, as the students' environment has it.
PRIVATE_SUBMIT = Path(__file__).with_name("private_submit.py")
PRIVATE_SUBMIT_MODULE = "autograd_hub_submit"
# Jupyter's data and config of this environment (lab extensions, server extensions' switches).
SHARED_FOLDERS = ("share/jupyter", "etc/jupyter")


def normalised(name: str) -> str:
    """A distribution's name as packaging compares it (``Jupyter_Server`` -> jupyter-server)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(names: tuple[str, ...] | list[str]) -> set[str]:
    """The installed distributions ``names`` need, transitively, extras included (markers
    for this python)."""
    found: set[str] = set()
    pending = [Requirement(name) for name in names]
    while pending:
        requirement = pending.pop()
        key = f"{normalised(requirement.name)}[{','.join(sorted(requirement.extras))}]"
        if key in found:
            continue
        found.add(key)
        extras = {"", *requirement.extras}
        for text in importlib.metadata.requires(requirement.name) or []:
            needed = Requirement(text)
            marker = needed.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in extras):
                pending.append(needed)
    return {key.partition("[")[0] for key in found}


def link_file(source: Path, target: Path) -> None:
    """``target`` as a hard link to ``source``, or a copy across file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def link_tree(source: Path, target: Path, skip: set[str] | None = None) -> None:
    """Mirror the folder ``source`` at ``target``: folders made, files linked (or copied);
    caches and the ``skip`` folders of its top level left out."""
    if source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        link_file(source, target)
        return
    for folder, subfolders, files in os.walk(source):
        left_out = {"__pycache__", *(skip or ())} if folder == str(source) else {"__pycache__"}
        subfolders[:] = [s for s in subfolders if s not in left_out]
        here = target / Path(folder).relative_to(source)
        here.mkdir(parents=True, exist_ok=True)
        for name in files:
            if not (here / name).exists():
                link_file(Path(folder) / name, here / name)


def installed_tops(
    names: set[str],
) -> Iterator[tuple[importlib.metadata.Distribution, list[Path]]]:
    """Each installed distribution of ``names`` with the top-level files and folders it put
    in site-packages (those that exist: a record may list what was since removed)."""
    for dist in importlib.metadata.distributions():
        if normalised(dist.metadata["Name"]) not in names:
            continue
        root = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        yield dist, [root / top for top in sorted(tops) if (root / top).exists()]


def link_distributions(names: set[str], site: Path) -> None:
    """Every top-level file and folder of those installed distributions, linked into
    ``site``, and their commands (``alembic``, ``jupyter``, ``nbgrader``...) written into the
    environment's bin/ for its own python (this environment's scripts name this python)."""
    python = site.parents[2] / "bin" / "python"
    for dist, tops in installed_tops(names):
        for top in tops:
            if not (site / top.name).exists():
                link_tree(top, site / top.name)
        for entry in dist.entry_points.select(group="console_scripts"):
            write_script(python.parent / entry.name, python, entry.module, entry.attr)


def write_script(path: Path, python: Path, module: str, function: str) -> None:
    """A command that runs ``module:function`` on ``python``, as pip writes one."""
    head, _, rest = function.partition(".")
    call = f"{head}.{rest}" if rest else head
    path.write_text(
        f"#!{python}\nimport sys\nfrom {module} import {head}\n\n"
        # the guard: multiprocessing's spawn (Dask's workers) imports the script again
        f"if __name__ == '__main__':\n    sys.exit({call}())\n"
    )
    path.chmod(0o755)


def usable_by_all(path: Path) -> bool:
    """Whether any user can run ``path``: every folder above it open to others."""
    path = path.resolve()
    folders_open = all(os.stat(p).st_mode & 0o001 for p in path.parents)
    return folders_open and bool(os.stat(path).st_mode & 0o001)


def shared_interpreter(folder: Path) -> tuple[Path, str]:
    """(A Python every user can run, the LD_LIBRARY_PATH it needs): this environment's base
    interpreter where it is open to all, else its installation (interpreter, libpython and
    standard library, no site-packages) linked into ``folder``. A Python in root's home (as
    pyenv installs one) is closed to other users, and the system's may be another patch
    release than the one this environment's packages are tested on."""
    base = Path(sys._base_executable)
    if usable_by_all(base):
        return base, ""
    prefix, version = Path(sys.base_prefix), f"python{sys.version_info[0]}.{sys.version_info[1]}"
    link_tree(base.resolve(), folder / "bin" / version)
    link_tree(prefix / "lib" / version, folder / "lib" / version, skip={"site-packages", "test"})
    for library in (prefix / "lib").glob(f"lib{version}*.so*"):
        link_tree(library, folder / "lib" / library.name)
    # its libpython is found through its RUNPATH, which names the closed installation
    return folder / "bin" / version, str(folder / "lib")


def new_environment(folder: Path, base: Path, library_path: str) -> tuple[Path, Path]:
    """A fresh venv at ``folder`` on ``base``, with no pip: (its python, its purelib)."""
    env = {**os.environ, "LD_LIBRARY_PATH": library_path} if library_path else None
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, env=env)
    python = folder / "bin" / "python"
    if library_path:
        wrap_interpreter(python, base, library_path)
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout.strip()  # fmt: skip
    for shared in SHARED_FOLDERS:
        if (Path(sys.prefix) / shared).is_dir():
            link_tree(Path(sys.prefix) / shared, folder / shared)
    return python, Path(purelib)


def wrap_interpreter(python: Path, base: Path, library_path: str) -> None:
    """Make the venv's ``python`` a script that runs ``base`` with its libpython found, under
    the venv's own name (so Python still finds the venv): any process this python starts, with
    whatever environment, loads the right libpython."""
    python.unlink()
    python.write_text(f'#!/bin/bash\nLD_LIBRARY_PATH={library_path} exec -a "$0" {base} "$@"\n')
    python.chmod(0o755)
    for alias in python.parent.glob("python3*"):
        alias.unlink()
        alias.symlink_to("python")


def student_environment(folder: Path, kit_wheel: Path, base: Path, library_path: str) -> Path:
    """The students' environment at ``folder``: the kit's wheel over the linked packages."""
    python, site = new_environment(folder, base, library_path)
    link_distributions(closure(list(STUDENT_DISTRIBUTIONS)), site)
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index"]
    env = {**os.environ, "LD_LIBRARY_PATH": library_path} if library_path else None
    subprocess.run([*install, "--quiet", "--no-deps", str(kit_wheel)], check=True, env=env)
    shutil.copyfile(PRIVATE_SUBMIT, site / f"{PRIVATE_SUBMIT_MODULE}.py")
    return python


def instructor_environment(folder: Path, base: Path, library_path: str) -> Path:
    """The instructor's environment at ``folder``: every package of this one and a copy of
    ``autograder`` (this one installs it editable, from the repository)."""
    python, site = new_environment(folder, base, library_path)
    everything = {normalised(d.metadata["Name"]) for d in importlib.metadata.distributions()}
    link_distributions(everything - {COURSE_DISTRIBUTION}, site)
    shutil.copytree(
        PACKAGE_ROOT, site / PACKAGE_ROOT.name, ignore=shutil.ignore_patterns("__pycache__")
    )
    # The command the instructor grades with, as pip would have written it.
    write_script(folder / "bin" / "autograd-course", python, "autograder.grading.cli", "main")
    return python
