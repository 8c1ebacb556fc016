"""nbgrader's collect, taking a hand-in as student S's only when S's own account made it.

nbgrader's file exchange names a hand-in ``S+ASSIGNMENT+TIMESTAMP+RANDOM`` and believes the
name: a classmate who writes such a folder into the inbound (or runs ``nbgrader submit
--student S``) hands in as S, and ``nbgrader collect`` only warns. Here, before nbgrader
looks, every hand-in whose folder is not owned by S's account (or by an unknown uid, or a
link), or whose timestamp cannot be read, is set aside in the inbound under a dot-name that
nbgrader's pattern never matches, with one log line; nbgrader then collects S's newest own
hand-in. The course's nbgrader settings name this class (``c.ExchangeFactory.collect``);
where students hand in without their own Unix accounts, ``c.ExchangeCollect.check_owner =
False`` leaves the owner out (the timestamp is still checked).
"""

import os
import pwd
import shutil
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc

SET_ASIDE = ".refused-"  # a dot-name: nbgrader's glob of STUDENT+ASSIGNMENT+* never sees it


def claimed_student(name: str) -> str:
    """The student a hand-in folder's name claims (as nbgrader's collect reads it)."""
    return name.rsplit("+", 3)[0]


def refusal(path: Path, check_owner: bool = True, name: str | None = None) -> str | None:
    """Why the hand-in folder ``path`` (named ``name``, by default its own name) is not its
    claimed student's own (None: it is)."""
    parts = (name or path.name).rsplit("+", 3)
    if len(parts) < 3:
        return "its name is not STUDENT+ASSIGNMENT+TIMESTAMP"
    try:
        parse_utc(parts[2])
    except (ValueError, OverflowError, TypeError):
        return f"its timestamp {parts[2]!r} cannot be read"
    if not check_owner:
        return None
    if path.is_symlink() or not path.is_dir():
        return "it is not a folder"
    uid = path.lstat().st_uid
    try:
        owner = pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"it is owned by uid {uid}, which no account has"
    if owner != parts[0]:
        return f"it is owned by {owner}, not by {parts[0]}"
    return None


def set_aside(inbound: Path, pattern: str, check_owner: bool = True) -> list[str]:
    """Rename every hand-in of ``pattern`` that is not its student's own out of nbgrader's
    sight; one line each. (A rename in the same folder needs no right on the hand-in itself,
    which may belong to the student who forged it.)"""
    lines = []
    for path in sorted(inbound.glob(pattern)):
        reason = refusal(path, check_owner)
        if reason is None:
            continue
        target = path.with_name(SET_ASIDE + path.name)
        os.rename(path, target)
        lines.append(
            f"hand-in refused for {claimed_student(path.name)}: {path.name} ({reason}); "
            f"set aside as {target.name}"
        )
    return lines


def refused_hand_ins(inbound: Path) -> list[Path]:
    """The hand-ins set aside in ``inbound``."""
    return sorted(inbound.glob(SET_ASIDE + "*"))


def remove_refused(path: Path) -> str:
    """Remove one set-aside hand-in, or say why it cannot be and what to run instead."""
    try:
        shutil.rmtree(path)
    except PermissionError:
        owner = pwd.getpwuid(path.lstat().st_uid).pw_name if path.exists() else "?"
        return f"cannot remove {path} (its files are {owner}'s): as root, rm -r '{path}'"
    return f"removed {path}"


class OwnedCollect(ExchangeCollect):
    """``nbgrader collect`` that sets aside every hand-in its student did not make."""

    def init_src(self) -> None:
        """Set the others' hand-ins aside, then let nbgrader choose among the rest."""
        if self.coursedir.course_id:
            inbound = Path(self.root) / self.coursedir.course_id / "inbound"
            student = self.coursedir.student_id or "*"
            pattern = f"{student}+{self.coursedir.assignment_id}+*"
            if inbound.is_dir():
                for line in set_aside(inbound, pattern, self.check_owner):
                    self.log.error(line)
        super().init_src()
