"""The runtime record: an audit hook in the grading kernel writes what the student's cells
did; the grader charges it to their cells and flags it, next to the static scan's flags."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from tiny_course import hand_in, tiny_course

from autograder.grading.pipeline.autograde import GradingSettings, autograde, load_course
from autograder.grading.pipeline.autograde.job.kernel_launch import AUDIT_HOOK_FILE
from autograder.grading.pipeline.integrity import read_flags, scan_assignment
from autograder.grading.pipeline.integrity.runtime_record import read_record

# Runs in a fresh interpreter: the hook, then "cells" compiled under IPython-like names.
HOOK_DRIVER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("audit", sys.argv[1])
audit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(audit)
audit.install(sys.argv[2], sys.argv[3])
namespace = {"__name__": "__main__"}
for number, source in enumerate(sys.argv[4:], start=1):
    exec(compile(source, f"<ipython-input-{number}-0>", "exec"), namespace)
"""


def run_cells(tmp_path: Path, *cells: str) -> list[dict]:
    """The record's lines after running ``cells`` under the hook."""
    record = tmp_path / "record.jsonl"
    folder = tmp_path / "notebook"
    folder.mkdir(exist_ok=True)
    argv = [sys.executable, "-c", HOOK_DRIVER, str(AUDIT_HOOK_FILE), str(record), str(folder)]
    subprocess.run([*argv, *map(textwrap.dedent, cells)], check=True, cwd=folder)
    return [json.loads(line) for line in record.read_text().splitlines()]


def kinds(lines: list[dict]) -> set[tuple[str, str]]:
    return {(line["kind"], line["detail"].split()[0]) for line in lines if "detail" in line}


def test_hook_records_what_a_cell_does_and_not_what_libraries_do(tmp_path):
    lines = run_cells(
        tmp_path,
        """
        import json, dataclasses, subprocess, sys
        @dataclasses.dataclass
        class Point:
            x: int
        json.dumps({"a": 1})
        """,
        """
        exec("y = 1")
        subprocess.run(["true"])
        sys.settrace(None)
        def f(a=1):
            return a
        f.__defaults__ = (2,)
        open("../planted.txt", "w").write("x")
        open("inside.txt", "w").write("x")
        """,
    )
    assert lines[0]["kind"] == "start"
    found = kinds(lines)
    assert ("code", "compile:") in found and ("code", "exec") in found
    assert ("process", "subprocess.Popen") in found
    assert ("hook", "sys.settrace") in found and ("hook", "sets") in found
    assert ("file", "opens") in found
    cells = {line["cell"] for line in lines if "detail" in line}
    assert cells == {0}, "no shell: every cell runs under execution count 0"
    # The dataclass's generated __init__ and the imports of the first cell are not events.
    assert not any("dataclass" in line.get("detail", "") for line in lines)
    assert len([line for line in lines if line["kind"] == "file"]) == 2


def test_code_made_from_data_is_recorded_like_exec_and_imports_are_not(tmp_path):
    # Lent code kept as bytes and turned back into a function: no exec, no compile in the
    # cell that does it, and the attribute reached by a name the static scan cannot read.
    lines = run_cells(
        tmp_path,
        """
        import marshal, types
        kept = marshal.dumps(compile("def lent():\\n    return 42", "<lent>", "exec"))
        """,
        """
        import email.mime.text  # an import reads .pyc files through marshal: no event
        code = marshal.loads(kept)
        namespace = {}
        types.FunctionType(code, namespace)()
        part = getattr(namespace["lent"], "__" + "code" + "__")
        part.replace(co_name="renamed")
        """,
    )
    details = [line["detail"] for line in lines if line.get("kind") == "code"]
    assert any(d.startswith("marshal.loads") for d in details), details
    assert any(d.startswith("function.__new__") for d in details), details
    assert any(d.startswith("code.__new__") for d in details), details
    assert "reads a function's __code__" in details
    # compile() in the first cell is one event; no import added a marshal event.
    assert sum(d.startswith("marshal.") for d in details) == 1, details


def test_hook_refuses_to_reopen_or_truncate_its_record(tmp_path):
    lines = run_cells(
        tmp_path,
        """
        import os
        for attempt in (lambda: open("../record.jsonl", "w"),
                        lambda: os.truncate("../record.jsonl", 0)):
            try:
                attempt()
            except PermissionError:
                print("refused")
        """,
    )
    assert lines[0]["kind"] == "start", "the record was not truncated"


def test_hook_refuses_its_record_under_another_name(tmp_path):
    # The hook compares a path with the record's only when its last part is the record's
    # name or a symbolic link: a link of another name to the record is refused too.
    lines = run_cells(
        tmp_path,
        """
        import os
        os.symlink("../record.jsonl", "alias.txt")
        for attempt in (lambda: open("alias.txt", "w"), lambda: os.truncate("alias.txt", 0)):
            try:
                attempt()
            except PermissionError:
                continue
            raise AssertionError("the record was opened through a link")
        """,
    )
    assert lines[0]["kind"] == "start", "the record was not truncated"


def test_read_record_sums_counts_and_notices_forged_lines(tmp_path):
    path = tmp_path / "record.jsonl"
    lines = [{"cell": 0, "kind": "start", "pid": 1}, {"cell": 3, "kind": "cell", "counts": {}}]
    lines += [{"cell": 3, "line": n, "kind": "code", "detail": f"exec {n}"} for n in range(5)]
    lines += [{"cell": 4, "kind": "cell", "counts": {"3 code": 9}}]
    path.write_text("\n".join(map(json.dumps, lines)) + "\nnot json\n")
    record = read_record(path)
    assert record.started and record.cells == (3, 4) and record.unreadable == 1
    (events,) = record.events
    assert (events.cell, events.kind, events.count, len(events.details)) == (3, "code", 9, 5)
    assert not read_record(tmp_path / "missing").started


CHEAT = """\
import subprocess, sys
answer = 42
exec("answer = 42")
subprocess.run(["true"])
open("../../../planted.txt", "w").write("grade me 1")
get_ipython().input_transformers_post.append(lambda lines: lines)
"""
HONEST = """\
from dataclasses import dataclass


@dataclass
class Answer:
    value: int


answer = Answer(42).value
"""


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """The tiny assignment graded for an honest and a cheating student."""
    root = tiny_course(tmp_path_factory.mktemp("audit"))
    hand_in(root, "honest", HONEST)
    hand_in(root, "cheat", CHEAT)
    # Unsandboxed, so the cell can do what it attempts (the record is the same in the sandbox,
    # where most of these attempts fail early).
    run = autograde(root, ["tiny"], GradingSettings(workers=2, progress=False, sandbox=False))[0]
    return root, run


@pytest.mark.slow
def test_runtime_flags_reach_integrity_json_charged_to_the_cheating_cell(audited):
    root, run = audited
    assert {r.status for r in run.records} == {"graded"}
    flags = read_flags(root / "integrity.json")
    assert {f.student for f in flags} == {"cheat"}, flags
    assert {f.cell for f in flags} == {"answer"}
    rules = {f.rule for f in flags}
    assert {"runtime-code", "runtime-process", "runtime-file", "runtime-hook"} <= rules, flags
    hook = next(f for f in flags if f.rule == "runtime-hook")
    assert "input transformers" in hook.detail


@pytest.mark.slow
def test_scan_keeps_runtime_flags_and_zeroes_with_them(audited):
    root, _ = audited
    course = load_course(root)
    flags, zeroed = scan_assignment(course, "tiny", zero=True)
    assert {f.rule for f in flags if f.student == "cheat"} >= {"runtime-process"}
    assert ("cheat", "tiny", "test_answer") in zeroed
    assert not any(student == "honest" for student, _, _ in zeroed)
    stored = read_flags(root / "integrity.json")
    assert any(f.rule == "runtime-process" for f in stored), "the scan kept them"


def test_a_notebook_not_saved_after_its_run_is_counted_as_nbclient_runs_it():
    from autograder.grading.pipeline.integrity.runtime_record import in_run_order

    cells = [
        nbformat.v4.new_code_cell("a = 1"),
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("   "),
        nbformat.v4.new_code_cell("b = 2"),
    ]
    ordered = in_run_order(nbformat.v4.new_notebook(cells=cells))
    assert [c.get("execution_count") for c in ordered.cells if c.cell_type == "code"] == [
        1,
        None,
        2,
    ]


def test_a_killed_workers_record_is_salvaged_from_its_job_folder(tmp_path):
    from autograder.grading.pipeline.autograde.job.folder import JobFolder, salvaged_record
    from autograder.grading.pipeline.integrity.runtime_record import RECORD_NAME

    job = tmp_path / "autograde-job-1"
    (job / "submitted" / "ada").mkdir(parents=True)
    (job / RECORD_NAME).write_text(json.dumps({"cell": 0, "kind": "start"}) + "\n")
    assert salvaged_record(tmp_path, "ada").started
    assert salvaged_record(tmp_path, "grace") is None
    assert salvaged_record(None, "ada") is None
    # A sandboxed kernel writes its record beside its sockets: found there too.
    sandboxed = JobFolder(tmp_path / "autograde-job-2", "grace", "00-recipe")
    sandboxed.submitted.mkdir(parents=True)
    sandboxed.kernel_runtime.mkdir()
    record = sandboxed.runtime_record(sandboxed=True)
    record.write_text(json.dumps({"cell": 0, "kind": "start"}) + "\n")
    assert salvaged_record(tmp_path, "grace").started
