"""The autograde log grows by true appends (only the new records are written), and a run
killed in the middle of an append leaves a log every reader still reads: the complete
records, the next append repairing the file."""

import json
import os
import signal
import subprocess
import sys
import time

from autograder.grading.course.json_records import append_records, read_records
from autograder.grading.pipeline.autograde.log import GradingRecord, append_log, read_log_json
from autograder.grading.pipeline.report.logs import read_log_rows


def rec(n: int) -> dict:
    return {"student": f"s{n}", "assignment": "a", "status": "graded", "message": "x ] \n ,"}


def test_an_append_writes_only_the_new_records(tmp_path):
    path = tmp_path / "log.json"
    append_records(path, [rec(0), rec(1)])
    # Earlier bytes laid out as no writer would lay them out: a rewrite would change them.
    text = path.read_text().replace('"student": "s0"', '"student":    "s0"')
    path.write_text(text)
    inode = path.stat().st_ino
    append_records(path, [rec(2)])
    append_records(path, [rec(3), rec(4)])
    assert path.read_text().startswith(text[: -len("\n]\n")])
    assert path.stat().st_ino == inode, "the file was replaced, not appended to"
    assert json.loads(path.read_text()) == [rec(n) for n in range(5)]


def test_appending_to_a_log_written_by_the_old_writer(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(json.dumps([rec(0)], indent=1) + "\n")
    append_records(path, [rec(1)])
    assert json.loads(path.read_text()) == [rec(0), rec(1)]


def test_an_append_cut_short_at_any_byte_loses_only_that_record(tmp_path):
    path = tmp_path / "log.json"
    append_records(path, [rec(0), rec(1)])
    before = path.read_bytes()
    append_records(path, [rec(2)])
    after = path.read_bytes()
    start = len(before) - len("\n]\n")  # where the append began to write
    assert after[:start] == before[:start]
    for cut in range(start, len(after)):
        path.write_bytes(after[:cut])  # what a kill after ``cut`` bytes leaves
        records = read_records(path)
        assert records in ([rec(0), rec(1)], [rec(0), rec(1), rec(2)]), cut
        append_records(path, [rec(3)])
        assert json.loads(path.read_text()) == [*records, rec(3)], cut


def test_a_process_killed_while_appending_leaves_a_readable_log(tmp_path):
    path = tmp_path / "autograde_log.json"
    writer = (
        "import sys\n"
        "from autograder.grading.course.json_records import append_records\n"
        "n = 0\n"
        "while True:\n"
        "    append_records(__import__('pathlib').Path(sys.argv[1]),"
        " [{'student': f's{n}', 'assignment': 'a', 'status': 'graded', 'message': 'x' * 5000}])\n"
        "    n += 1\n"
    )
    process = subprocess.Popen([sys.executable, "-c", writer, str(path)])
    deadline = time.monotonic() + 60
    while (not path.exists() or path.stat().st_size < 200_000) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    records = read_log_json(tmp_path)
    assert len(records) > 10
    assert [r["student"] for r in records] == [f"s{n}" for n in range(len(records))]
    assert [row.student for row in read_log_rows(tmp_path, "a")] == [r["student"] for r in records]
    record = GradingRecord("next", "a", "graded", 1.0, 1, "", "2026-01-01T00:00:00+00:00")
    append_log(tmp_path, [record])
    assert json.loads(path.read_text())[-1]["student"] == "next"
