"""Does collecting an LMS zip keep each upload to its uploader and survive hostile members?

Unit tests read hand-built zips with ``vet_download`` (no nbgrader); one test collects a
hostile download into a tiny course with nbgrader's real ``zip_collect``.
"""

import io
import json
import stat
import zipfile

import nbformat
import pytest
from tiny_course import ASSIGNMENT, tiny_course

from autograder.grading.cli import main
from autograder.grading.course.course_root import AutogradeError
from autograder.grading.course.repo_paths import notebook_path
from autograder.grading.pipeline.autograde import collect_zip
from autograder.grading.pipeline.autograde.intake.zip_collect import COLLECT_LOG_NAME
from autograder.grading.pipeline.autograde.intake.zip_vetting import vet_download

A = "00-recipe"
NOTEBOOK = nbformat.writes(nbformat.v4.new_notebook()).encode()


def zip_bytes(*entries: tuple) -> bytes:
    """A zip of (name, bytes[, unix mode]) entries, deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, *mode in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode:
                info.external_attr = mode[0] << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def vet(tmp_path, *entries: tuple, **limits):
    path = tmp_path / "download.zip"
    path.write_bytes(zip_bytes(*entries))
    return vet_download(path, A, **limits)


def reasons(vetting) -> dict[str, str]:
    return {r.student: r.reason for r in vetting.refused}


def damaged_member(data: bytes, name: str) -> bytes:
    """``data`` with one byte of ``name``'s compressed stream flipped (the first place its
    name appears is its local header, right before its data: no extra field here)."""
    damaged = bytearray(data)
    start = damaged.find(name.encode()) + len(name)
    damaged[start + 20] ^= 0xFF
    return bytes(damaged)


def test_a_zip_uploaded_by_one_student_is_never_filed_under_another(tmp_path):
    inner = zip_bytes((f"bob_{A}.ipynb", b'{"cheat": 1}'))
    alone = vet(tmp_path, (f"ann_{A}.zip", inner), (f"carol_{A}.ipynb", NOTEBOOK))
    assert sorted(alone.notebooks) == ["carol"]
    assert "an archive inside the upload, not opened" in reasons(alone)["ann"]
    # bob handed in his own: it is his that is kept, and the cohort is not failed
    both = vet(tmp_path, (f"ann_{A}.zip", inner), (f"bob_{A}.ipynb", NOTEBOOK))
    assert both.notebooks == {"bob": NOTEBOOK}
    assert both.refused_students == ["ann"]
    # in folder form, and an archive renamed as a notebook (found by its first bytes)
    folder = vet(tmp_path, (f"dl/ann/{A}.zip", inner), (f"dl/dan/{A}.ipynb", inner))
    assert folder.notebooks == {} and folder.refused_students == ["ann", "dan"]
    assert "an archive named as a notebook" in reasons(folder)["dan"]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (f"../../ann_{A}.ipynb", "path traversal"),
        (f"/tmp/ann_{A}.ipynb", "an absolute path"),
        (f"C:/ann_{A}.ipynb", "an absolute path"),
        (f"..\\ann_{A}.ipynb", "a backslash"),
    ],
)
def test_unsafe_member_names_refuse_that_student_only(name, reason, tmp_path):
    vetting = vet(tmp_path, (name, NOTEBOOK), (f"bob_{A}.ipynb", NOTEBOOK))
    assert vetting.notebooks == {"bob": NOTEBOOK}
    assert reason in reasons(vetting)["ann"] and "\n" not in reasons(vetting)["ann"]


def test_an_unsafe_member_naming_nobody_is_ignored_and_said(tmp_path):
    vetting = vet(tmp_path, ("../../etc/cron.d/x", b"*"), (f"bob_{A}.ipynb", NOTEBOOK))
    assert vetting.notebooks == {"bob": NOTEBOOK}
    assert reasons(vetting)[""].startswith("ignored: a '..' component")


@pytest.mark.parametrize(
    ("mode", "kind"), [(stat.S_IFLNK | 0o777, "symlink"), (stat.S_IFIFO | 0o666, "special file")]
)
def test_symlink_and_special_members_are_refused(mode, kind, tmp_path):
    vetting = vet(tmp_path, (f"ann_{A}.ipynb", b"/etc/passwd", mode), (f"bob_{A}.ipynb", NOTEBOOK))
    assert vetting.notebooks == {"bob": NOTEBOOK}
    assert reasons(vetting)["ann"].startswith(kind)


def encrypted(data: bytes) -> bytes:
    """``data`` with its first member marked encrypted (general purpose flag bit 0) in both
    of its headers, as a zip made with a password says."""
    marked = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        marked[marked.find(signature) + offset] |= 0x01
    return bytes(marked)


@pytest.mark.parametrize(
    ("damage", "said"),
    [(None, ""), (encrypted, "encrypted")],  # "": Bad CRC, or zlib
)
def test_a_corrupt_or_encrypted_member_refuses_its_student_only(damage, said, tmp_path):
    data = zip_bytes((f"ann_{A}.ipynb", NOTEBOOK), (f"bob_{A}.ipynb", NOTEBOOK))
    path = tmp_path / "download.zip"
    path.write_bytes(damage(data) if damage else damaged_member(data, f"ann_{A}.ipynb"))
    vetting = vet_download(path, A)
    assert vetting.notebooks == {"bob": NOTEBOOK}
    assert reasons(vetting)["ann"].startswith(f"unreadable member 'ann_{A}.ipynb'")
    assert said in reasons(vetting)["ann"]


def test_sizes_are_bounded_by_declared_and_actual_size(tmp_path):
    big = b"{" + b" " * 5000 + b"}"
    declared = vet(
        tmp_path, (f"ann_{A}.ipynb", big), (f"bob_{A}.ipynb", NOTEBOOK), max_notebook=4096
    )
    assert declared.notebooks == {"bob": NOTEBOOK}
    assert "declares 5002 bytes, over the limit of 4096" in reasons(declared)["ann"]
    # a header that lies: declared 10 bytes in both directories, 5002 inside
    data = bytearray(zip_bytes((f"ann_{A}.ipynb", big), (f"bob_{A}.ipynb", NOTEBOOK)))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.find(signature)
        assert int.from_bytes(data[at + offset : at + offset + 4], "little") == len(big)
        data[at + offset : at + offset + 4] = (10).to_bytes(4, "little")
    path = tmp_path / "lying.zip"
    path.write_bytes(bytes(data))
    lying = vet_download(path, A, max_notebook=4096)
    assert lying.notebooks == {"bob": NOTEBOOK} and lying.refused_students == ["ann"]
    total = vet(tmp_path, (f"ann_{A}.ipynb", big), (f"bob_{A}.ipynb", big), max_total=6000)
    assert sorted(total.notebooks) == ["ann"]
    assert "total limit of 6000 bytes" in reasons(total)["bob"]


def test_duplicates_are_that_students_outcome(tmp_path):
    other = NOTEBOOK + b" "
    vetting = vet(
        tmp_path,
        (f"ann_{A}.ipynb", NOTEBOOK),
        (f"late/ann/{A}.ipynb", other),
        (f"bob_{A}.ipynb", NOTEBOOK),
        (f"again/bob/{A}.ipynb", NOTEBOOK),  # the same bytes twice: no doubt which
    )
    assert vetting.notebooks == {"bob": NOTEBOOK}
    assert reasons(vetting)["ann"].startswith("2 different notebooks for one student")


def test_ids_that_cannot_be_filed_are_refused(tmp_path):
    long = "x" * 129
    vetting = vet(
        tmp_path,
        (f"{long}_{A}.ipynb", NOTEBOOK),
        (f"ev\nil/{A}.ipynb", NOTEBOOK),
        (f"bob_{A}.ipynb", NOTEBOOK),
    )
    assert vetting.notebooks == {"bob": NOTEBOOK}
    assert reasons(vetting)[long].startswith("an id longer than 128 characters")
    assert reasons(vetting)["ev\nil"] == "an id with an unprintable character: 'ev\\nil'"


@pytest.mark.parametrize("damage", ["not a zip", "central directory"])
def test_an_unreadable_download_exits_2_with_the_reason_first(damage, tmp_path, capsys):
    root = tmp_path / "course"
    (root / "source" / A).mkdir(parents=True)
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    data = zip_bytes((f"ann_{A}.ipynb", NOTEBOOK))
    if damage == "not a zip":
        data = b"hello"
    else:
        at = data.find(b"PK\x01\x02")
        data = data[:at] + b"\x00" * 4 + data[at + 4 :]
    path = tmp_path / "download.zip"
    path.write_bytes(data)
    with pytest.raises(AutogradeError):
        vet_download(path, A)
    assert main(["autograde", A, "--root", str(root), "--zip", str(path)]) == 2
    error = capsys.readouterr().err.splitlines()
    assert len(error) == 1 and error[0].startswith(f"error: {path} is not a")


@pytest.mark.slow
def test_a_hostile_download_is_collected_by_nbgrader_per_student(tmp_path):
    root = tiny_course(tmp_path / "tiny")
    release = notebook_path(root / "release", ASSIGNMENT).read_bytes()
    name = f"ann_{ASSIGNMENT}.ipynb"
    download = zip_bytes(
        (f"ann_{ASSIGNMENT}.zip", zip_bytes((f"bob_{ASSIGNMENT}.ipynb", release))),
        (f"bob_{ASSIGNMENT}.ipynb", release),
        (f"carol_{ASSIGNMENT}.ipynb", release),
        (f"dan_{ASSIGNMENT}.ipynb", b"/etc/passwd", stat.S_IFLNK | 0o777),
        (f"../../eve_{ASSIGNMENT}.ipynb", release),
        (name.replace("ann", "fay"), release),
    )
    path = tmp_path / "download.zip"
    path.write_bytes(damaged_member(download, name.replace("ann", "fay")))
    collection = collect_zip(root, ASSIGNMENT, path)
    assert collection.collected == ["bob", "carol"]
    refused = {r.student: r.reason.split(":")[0] for r in collection.refused}
    assert refused == {
        "ann": "an archive inside the upload, not opened",
        "dan": "symlink",
        "eve": "a '..' component (path traversal)",
        "fay": "unreadable member 'fay_tiny.ipynb'",
    }
    files = [p for p in (root / "submitted").rglob("*") if not p.is_dir()]
    assert sorted(p.parent.parent.name for p in files) == ["bob", "carol"]
    assert all(p.read_bytes() == release for p in files)
    assert not [p for p in files if p.stat().st_mode & stat.S_IWOTH], "world-writable"
    assert not list(tmp_path.glob("eve*")) and not list(root.glob(".zip-collect-*"))
    log = json.loads((root / COLLECT_LOG_NAME).read_text())
    assert {(r["student"], r["status"]) for r in log} == {
        ("bob", "collected"),
        ("carol", "collected"),
        *((s, "invalid-upload") for s in ("ann", "dan", "eve", "fay")),
    }
