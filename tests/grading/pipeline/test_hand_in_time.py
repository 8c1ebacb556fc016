"""Is a hand-in's timestamp.txt vetted before nbgrader reads it: graded as on time (with a
note) when missing or unreadable, kept (with a note) when in the future, never a crash?"""

import datetime as dt

import pytest

from autograder.grading.pipeline.autograde.intake.hand_in_time import TIMESTAMP, vetted

NOW = dt.datetime(2026, 12, 7, 12, tzinfo=dt.UTC)
NOTEBOOK = {"a.ipynb": b"{}"}


def test_a_readable_past_timestamp_is_kept_without_a_note():
    files = NOTEBOOK | {TIMESTAMP: b"2026-12-01 10:00:00.000000 UTC\n"}
    assert vetted(files, NOW) == (files, "")


@pytest.mark.parametrize(
    ("stamp", "note"),
    [
        (None, "no timestamp.txt: graded as on time"),
        (b"  \n", "no timestamp.txt: graded as on time"),
        (b"half past nine", "'half past nine' cannot be read: graded as on time"),
        (b"\xff\xfe garbage", "cannot be read: graded as on time"),
        (b"2026-12-01 10:00 UTC" + b"9" * 10_000_000, "cannot be read: graded as on time"),
    ],
    ids=["missing", "empty", "words", "bytes", "ten-megabytes"],
)
def test_a_missing_or_unreadable_timestamp_is_on_time_with_a_note(stamp, note):
    files = NOTEBOOK | ({} if stamp is None else {TIMESTAMP: stamp})
    kept, said = vetted(files, NOW)
    assert note in said and "a.ipynb" in kept
    if stamp is not None and stamp.strip():
        assert TIMESTAMP not in kept  # nbgrader would stop on it


def test_a_future_timestamp_is_kept_as_written_and_said():
    files = NOTEBOOK | {TIMESTAMP: b"2999-01-01 00:00:00.000000 UTC"}
    kept, said = vetted(files, NOW)
    assert kept == files and "is in the future: kept as written" in said
    near = NOTEBOOK | {TIMESTAMP: b"2026-12-07 12:03:00.000000 UTC"}  # within clock slack
    assert vetted(near, NOW) == (near, "")


def test_an_ungraded_hand_ins_timestamp_is_read_the_same_way(tmp_path):
    """merge records an ungraded hand-in's time with the same reading: none when unreadable."""
    from types import SimpleNamespace

    from autograder.grading.pipeline.autograde.merge import submission_timestamp

    folder = tmp_path / "submitted" / "ada" / "tiny"
    folder.mkdir(parents=True)
    course = SimpleNamespace(submitted=tmp_path / "submitted")
    assert submission_timestamp(course, "tiny", "ada") is None
    (folder / TIMESTAMP).write_bytes(b"\xff\xfe not a time")
    assert submission_timestamp(course, "tiny", "ada") is None
    (folder / TIMESTAMP).write_text("2026-12-01 10:00:00.000000 UTC")
    assert submission_timestamp(course, "tiny", "ada") == dt.datetime(2026, 12, 1, 10)
