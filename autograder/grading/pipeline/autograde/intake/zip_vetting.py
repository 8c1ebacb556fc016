"""Reading an LMS download (a zip of students' uploads) safely, before nbgrader sees it.

nbgrader's ``zip_collect`` unpacks every member, archives inside archives too, and files
whatever the names say: a zip uploaded by one student holding ``<other>_<assignment>.ipynb``
was filed and graded as the other student, and one bad member failed the whole cohort.
Here the download is read with ``zipfile`` alone, member by member, and nothing is
extracted by name: each student's notebook is read into memory, bounded, and the caller
writes it where the student's id says. Every problem is that student's outcome with a
one-line reason; only a download that is not a readable zip at all is refused as a whole.

Nested archives are refused, not opened: the names inside one are chosen by the student,
not by the LMS, so they say nothing about who handed it in, and opening them would bring
back every hazard checked here one level down.
"""

import re
import stat
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.grading.course.course_root import MAX_ID_LENGTH, AutogradeError

# The course's notebooks are about 100 KB as released; this leaves room for outputs and
# figures. A member larger, declared or actually decompressed, is a zip bomb or no hand-in.
MAX_NOTEBOOK_BYTES = 64 * 2**20
# All notebooks collected from one download together (a cohort of thousands fits).
MAX_TOTAL_BYTES = 4 * 2**30

# Suffixes and leading bytes of archives: a member that is one is never opened.
ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".zst", ".7z", ".rar")
ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf")
ARCHIVE_MAGIC += (b"Rar!", b"(\xb5/\xfd")

# What reading a damaged or unsupported member raises in zipfile and its decompressors.
# (RuntimeError: encrypted; NotImplementedError: an unknown compression method.)
READ_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    RuntimeError,
    ValueError,
    NotImplementedError,
)


class TooLarge(ValueError):
    """A member over the size limit, by its declared or its actual size."""


@dataclass(frozen=True)
class Refusal:
    """A student's upload not collected, or a member no student can be named for."""

    student: str  # "" when the member names no student
    member: str
    reason: str


@dataclass
class Vetting:
    """What a download holds: each collectable student's notebook, and what was refused."""

    notebooks: dict[str, bytes] = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)

    @property
    def refused_students(self) -> list[str]:
        """The students whose upload was refused, each once, sorted."""
        return sorted({r.student for r in self.refused if r.student})


def notebook_pattern(assignment: str) -> re.Pattern[str]:
    """``<student>_<assignment>.ipynb`` or ``<student>/<assignment>.ipynb`` at a path's end;
    ids never start with a dot (macOS adds ``__MACOSX/._name`` copies)."""
    return re.compile(rf"(?:^|/)(?P<student>[^/.][^/]*?)[_/]{re.escape(assignment)}\.ipynb$")


def unsafe_name(name: str) -> str | None:
    """Why a member's name could write outside a folder it is extracted to, or None."""
    if "\x00" in name:
        return "a NUL character in its name"
    if "\\" in name:  # a separator on Windows, where most LMS downloads are opened
        return "a backslash in its name"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "an absolute path"
    if ".." in PurePosixPath(name).parts:
        return "a '..' component (path traversal)"
    return None


def member_kind(info: zipfile.ZipInfo) -> str | None:
    """'symlink' or 'special file' for a member that is not a plain file or folder, else None.

    Unix zips keep the file's mode in the high bits of ``external_attr``; an extractor that
    honours it makes a symlink (or a world-writable file from a symlink's 0o777 mode)."""
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if not kind or kind in (stat.S_IFREG, stat.S_IFDIR):
        return None
    return "symlink" if kind == stat.S_IFLNK else "special file"


def uploader(name: str, assignment: str, student_folders: set[str]) -> str | None:
    """The student a member belongs to by the LMS's naming, or None.

    ``<student>_<assignment>.<anything>``, ``<student>/<assignment>.<anything>``, or any
    member in the folder of a student who has a notebook in folder form."""
    path = PurePosixPath(name.replace("\\", "/"))
    stem = re.escape(assignment)
    match = re.match(rf"^(?P<student>[^.][^/]*?)_{stem}(\..*)?$", path.name)
    if match:
        return match["student"]
    folder = path.parent.name
    if folder and not folder.startswith("."):
        if re.match(rf"^{stem}(\..*)?$", path.name) or folder in student_folders:
            return folder
    return None


def is_archive(name: str, head: bytes) -> bool:
    """A member that is an archive by its name or by its first bytes."""
    return name.lower().endswith(ARCHIVE_SUFFIXES) or head.startswith(ARCHIVE_MAGIC)


def read_bounded(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """The member's bytes, refusing it once it decompresses past ``limit`` whatever its
    header declares (a declared size is the archive's word, not a fact)."""
    if info.file_size > limit:
        raise TooLarge(f"declares {info.file_size} bytes, over the limit of {limit}")
    chunks, size = [], 0
    with archive.open(info) as member:
        while chunk := member.read(2**20):
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"decompresses past the limit of {limit} bytes")
            chunks.append(chunk)
    return b"".join(chunks)


def open_download(zip_path: Path) -> zipfile.ZipFile:
    """The download as a zip, or AutogradeError saying in one line why it is not one."""
    if not zip_path.is_file():
        raise AutogradeError(f"no zip file at {zip_path}")
    try:
        if not zipfile.is_zipfile(zip_path):
            raise AutogradeError(f"{zip_path} is not a zip file")
        archive = zipfile.ZipFile(zip_path)
        archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise AutogradeError(f"{zip_path} is not a readable zip file: {error}") from None
    return archive


def vet_download(
    zip_path: Path,
    assignment: str,
    max_notebook: int = MAX_NOTEBOOK_BYTES,
    max_total: int = MAX_TOTAL_BYTES,
) -> Vetting:
    """Each student's notebook from an LMS download, and each upload refused with why.

    AutogradeError only when the file is not a readable zip or names no notebook at all."""
    pattern = notebook_pattern(assignment)
    with open_download(zip_path) as archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        named = [(i, pattern.search(i.filename.replace("\\", "/"))) for i in infos]
        if not any(match for _, match in named):
            raise AutogradeError(
                f"{zip_path} holds no notebook named <student>_{assignment}.ipynb "
                f"or <student>/{assignment}.ipynb"
            )
        folders = {m["student"] for i, m in named if m and i.filename.count("/")}
        members: dict[str, list[zipfile.ZipInfo]] = defaultdict(list)
        vetting = Vetting()
        for info, match in named:
            student = match["student"] if match else uploader(info.filename, assignment, folders)
            problem = unsafe_name(info.filename) or member_kind(info)
            if student is None:
                if problem:  # nothing of it is written anywhere; said so it is not missed
                    vetting.refused.append(Refusal("", info.filename, f"ignored: {problem}"))
                continue
            problem = id_problem(student) or (f"{problem}: {info.filename!r}" if problem else None)
            if problem:
                vetting.refused.append(Refusal(student, info.filename, problem))
            elif match or is_archive(info.filename, b""):
                members[student].append(info)
        total = 0
        for student in sorted(set(members) - set(vetting.refused_students)):
            content = _one_notebook(archive, members[student], max_notebook, vetting, student)
            if content is None:
                continue
            if total + len(content) > max_total:
                reason = f"the download's notebooks pass the total limit of {max_total} bytes"
                vetting.refused.append(Refusal(student, members[student][0].filename, reason))
                continue
            total += len(content)
            vetting.notebooks[student] = content
    return vetting


def id_problem(student: str) -> str | None:
    """Why a student id from a member's name cannot be filed, or None."""
    if len(student) > MAX_ID_LENGTH:
        return f"an id longer than {MAX_ID_LENGTH} characters (nbgrader's gradebook)"
    if not student.isprintable():  # a newline or control character in a folder name
        return f"an id with an unprintable character: {student!r}"
    return None


def _one_notebook(
    archive: zipfile.ZipFile,
    infos: list[zipfile.ZipInfo],
    limit: int,
    vetting: Vetting,
    student: str,
) -> bytes | None:
    """The student's one notebook; None, with the refusal recorded, when one of their
    members is an archive, damaged or too large, or their notebooks differ."""
    notebooks = {}
    for info in infos:
        name = info.filename
        if is_archive(name, b""):
            reason = f"an archive inside the upload, not opened: {name!r}; hand in the notebook"
            vetting.refused.append(Refusal(student, name, reason))
            return None
        try:
            content = read_bounded(archive, info, limit)
        except TooLarge as error:
            vetting.refused.append(Refusal(student, name, f"too large: {name!r} {error}"))
            return None
        except READ_ERRORS as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            vetting.refused.append(Refusal(student, name, f"unreadable member {name!r}: {message}"))
            return None
        if is_archive(name, content[:8]):
            reason = f"an archive named as a notebook, not opened: {name!r}"
            vetting.refused.append(Refusal(student, name, reason))
            return None
        notebooks[name] = content
    if len(set(notebooks.values())) > 1:  # the same bytes twice leave no doubt
        names = ", ".join(repr(n) for n in sorted(notebooks))
        reason = f"{len(notebooks)} different notebooks for one student: {names}"
        vetting.refused.append(Refusal(student, sorted(notebooks)[0], reason))
        return None
    return next(iter(notebooks.values()))
