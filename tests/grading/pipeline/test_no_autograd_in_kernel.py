"""With trusted verdicts the student's kernel has no autograd library and no reference
engine while grading: in the sandbox they are not there at all; unsandboxed, the kernel
refuses the autograd imports it can (best effort) and the runtime record flags every try.
With verdicts in the student's kernel (nbgrader's way) the same cells would earn points."""

import sys
import textwrap

import pytest
from tiny_course import hand_in, tiny_course

from autograder.grading.course import system_tools
from autograder.grading.course.autograd_packages import AUTOGRAD_PACKAGES
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde
from autograder.grading.pipeline.autograde.job.sandbox import (
    KERNEL_WINGS,
    SANDBOX_ENV,
    JobSandbox,
    SandboxOptions,
    unavailable_reason,
)
from autograder.grading.pipeline.integrity import scan_assignment

needs_bwrap = pytest.mark.skipif(
    unavailable_reason() is not None,
    reason=system_tools.missing("bwrap", f"no sandbox here: {unavailable_reason()}"),
)

# Each answer is 42 only when the forbidden thing was reached.
ANSWERS = {
    "torch-import": "import torch\nanswer = 42 if torch.ones(1).item() == 1 else 0",
    "torch-built-name": "answer = 42 if __import__('to' + 'rch').ones(1).sum() == 1 else 0",
    "engine-import": (
        "answer = 42 if __import__('autograder.en' + 'gine.scalar', fromlist=['_']).Scalar else 0"
    ),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tiny_course(tmp_path_factory.mktemp("no-autograd"))
    for student, answer in ANSWERS.items():
        hand_in(root, student, answer)
    return root


def points(root) -> dict[str, float]:
    db_url = f"sqlite:///{root / 'gradebook.db'}"
    return {s: cell_scores(db_url, s, "tiny")["test_answer"].score for s in ANSWERS}


@pytest.mark.slow
@needs_bwrap
def test_sandboxed_kernel_has_neither_torch_nor_the_engine(course):
    autograde(
        course, ["tiny"], GradingSettings(workers=2, progress=False, verdicts="kernel", force=True)
    )[0]
    kernel = points(course)
    # Proof that the answers work where these are there (the kernel's own verdicts).
    assert kernel == {"torch-import": 1, "torch-built-name": 1, "engine-import": 1}
    autograde(course, ["tiny"], GradingSettings(workers=2, progress=False, force=True))[0]
    assert points(course) == dict.fromkeys(ANSWERS, 0)


@pytest.mark.slow
def test_unsandboxed_kernel_refuses_torch_and_the_record_flags_each_try(course, monkeypatch):
    monkeypatch.setenv(SANDBOX_ENV, "off")
    autograde(course, ["tiny"], GradingSettings(workers=2, progress=False, force=True))[0]
    got = points(course)
    assert got["torch-import"] == got["torch-built-name"] == 0
    flags, _ = scan_assignment(load(course), "tiny", zero=False)
    flagged = {f.student for f in flags if f.rule == "runtime-autograd"}
    # The engine is on disk without a sandbox: reached, but flagged (zeroing takes it).
    assert flagged == set(ANSWERS)


def load(root):
    from autograder.grading.course.course_root import load_course

    return load_course(root)


PROBE = textwrap.dedent(
    """
    import importlib, os
    for name in {names!r}:
        try:
            importlib.import_module(name)
            print("imported", name)
        except ImportError as error:
            print("missing", name, type(error).__name__)
    import autograder
    package = os.path.dirname(autograder.__file__)
    print("engine folder", os.path.exists(os.path.join(package, "engine")))
    print("package", sorted(os.listdir(package)))
    """
)


@needs_bwrap
def test_the_sandbox_mounts_no_autograd_library_and_no_engine(tmp_path):
    import subprocess

    work = tmp_path / "autograded" / "ada" / "tiny"
    work.mkdir(parents=True)
    sandbox = JobSandbox(tmp_path, work, SandboxOptions(AUTOGRAD_PACKAGES, hide_engine=True))
    names = [
        "torch",
        "torch.nn",
        "autograder.engine",
        "autograder.engine.scalar",
        "autograder.grading.pipeline.autograde",
        "autograder.checks",
        "autograder.checks.given",
        "autograder.checks.graphs",
        "autograder.kernel.serve",
    ]
    try:
        command = sandbox.wrap([sys.executable, "-c", PROBE.format(names=names)])
        result = subprocess.run(command, capture_output=True, text=True, cwd=work, timeout=120)
    finally:
        sandbox.close()
    lines = set(result.stdout.splitlines())
    for name in names[:5]:
        assert f"missing {name} ModuleNotFoundError" in lines, result.stdout + result.stderr
    for name in names[5:]:
        assert f"imported {name}" in lines, result.stdout + result.stderr
    assert "engine folder False" in lines
    shown = "package " + repr(sorted(KERNEL_WINGS))
    assert shown in lines, result.stdout  # the kernel wings whole, nothing else
