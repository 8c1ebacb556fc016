"""The kernel-side wheel of the student kit: the package's notebook names and the checks wing.

A student's kernel imports ``autograder`` (the check helpers and, by the same path, every
other notebook helper) and ``autograder.checks`` (the checks, their messages, the progress
cell, the graph drawing, the exercises' lending in its kit form). The wheel holds exactly
those, the checks wing whole, and nothing of ``autograder.engine``
(the answers) or ``autograder.grading`` (the instructor's tools). It is built by setuptools
from a staging folder, through ``pip wheel`` without network or build isolation
(setuptools comes with the course's environment, as nbgrader's and torch's dependency), and
declares only what a kernel needs.
"""

import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the autograder package
DISTRIBUTION = "autograd-course-kit"
# The package files a kernel imports, relative to the autograder package.
KERNEL_FILES = ("__init__.py",)
KERNEL_WING = "checks"
# What a kernel imports besides the standard library (IPython: the display and tracebacks;
# jinja2: the checks' HTML fragments, written by templates that escape everything).
REQUIREMENTS = ("numpy>=1.26", "torch>=2.6", "matplotlib>=3.8", "ipython>=8", "jinja2>=3.1")

PYPROJECT = """\
[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "{version}"
description = "The checks of the autograd course for a student's Jupyter kernel (no answers)."
requires-python = ">=3.11"
dependencies = [{dependencies}]

[tool.setuptools]
packages = ["autograder", "autograder.checks"]
include-package-data = false

[tool.setuptools.package-data]
"autograder.checks" = ["messages/*.po", "templates/*.html"]
"""


def course_version() -> str:
    """The installed course's version: the kit is the same release of the same checks."""
    return importlib.metadata.version("autograd-course")


def stage(target: Path) -> Path:
    """Copy the kernel-side package into ``target`` with its pyproject.toml; return it."""
    package = target / "autograder"
    package.mkdir(parents=True)
    for name in KERNEL_FILES:
        shutil.copy2(PACKAGE_ROOT / name, package / name)
    shutil.copytree(
        PACKAGE_ROOT / KERNEL_WING,
        package / KERNEL_WING,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"),
    )
    dependencies = ", ".join(f'"{requirement}"' for requirement in REQUIREMENTS)
    text = PYPROJECT.format(name=DISTRIBUTION, version=course_version(), dependencies=dependencies)
    (target / "pyproject.toml").write_text(text, encoding="utf-8")
    return target


def build_wheel(out_dir: Path) -> Path:
    """Build the kit's wheel into ``out_dir``; return its path."""
    with tempfile.TemporaryDirectory(prefix="kit-wheel-") as scratch:
        source = stage(Path(scratch) / "source")
        command = [
            sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index",
            "--no-build-isolation", "--wheel-dir", str(out_dir), str(source),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"building the kit's wheel failed: {done.stderr.strip()}")
    wheels = sorted(out_dir.glob(f"{DISTRIBUTION.replace('-', '_')}-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one kit wheel in {out_dir}, found {wheels}")
    return wheels[0]
