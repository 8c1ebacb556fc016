"""nbgrader's ``release_assignment``, refused while the release would show an open assignment's
answers: the term's rule (``release_schedule``) wherever nbgrader releases.

The course's nbgrader settings name this class as the exchange's release
(``c.ExchangeFactory.release_assignment``), so the rule holds for ``nbgrader
release_assignment``, the formgrader's release button and ``autograd-course
release-assignment`` alike. What each release shows is read from the course root itself (its
source and release folders: on a hub the instructor's tools are installed, with no
repository beside them). The term is the course root's ``term.toml``; a course root without
one has no due dates, so only a release that shows no other assignment's answers may go out.
``force_reason`` releases anyway; the reason goes to nbgrader's log and to ``release-log.txt``
in the course root.

The release also gives the exchange's inbound the sticky bit, which nbgrader's does not: in
a folder every student may write to, a hand-in may then be renamed or removed by its own
student and the instructor only, never by a classmate who learns its name.
"""

import os
import stat
from datetime import datetime
from pathlib import Path

from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from traitlets import Unicode

from autograder.grading.authoring.release_schedule import release_refusal
from autograder.grading.authoring.reveals import course_reveal_map
from autograder.grading.course.course_root import sqlite_file
from autograder.grading.course.term import TermError, now, read_term

RELEASE_LOG = "release-log.txt"


class ScheduledRelease(ExchangeReleaseAssignment):
    """The exchange's release of one assignment, refused while it would reveal an open one."""

    term_file = Unicode("term.toml", help="the term's due dates, relative to the course root").tag(
        config=True
    )
    force_reason = Unicode(
        "", help="release although the term refuses it, for this reason (logged)"
    ).tag(config=True)

    def init_dest(self) -> None:
        """nbgrader's outbound and inbound folders, the inbound made sticky."""
        super().init_dest()
        mode = os.stat(self.inbound_path).st_mode
        if not mode & stat.S_ISVTX:
            os.chmod(self.inbound_path, stat.S_IMODE(mode) | stat.S_ISVTX)

    def init_src(self) -> None:
        """nbgrader's check of the release folder, then the term's."""
        super().init_src()
        assignment = self.coursedir.assignment_id
        root = Path(self.coursedir.root)
        source, release = self.coursedir.source_directory, self.coursedir.release_directory
        reveals = course_reveal_map(root / source, root / release)
        try:
            gradebook = sqlite_file(self.coursedir.db_url)  # its extensions hold releases back
            term = read_term(root / self.term_file, list(reveals.assignments), gradebook)
        except TermError as error:
            self.fail(str(error))
        refused = release_refusal(assignment, reveals, term, now())
        if refused is None:
            return
        if not self.force_reason.strip():
            self.fail(
                f"release refused: {refused}; to release anyway: autograd-course release-"
                "assignment --force REASON (nbgrader: --ScheduledRelease.force_reason=REASON)"
            )
        when = f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
        line = f"{when}: released {assignment} although {refused}; forced: {self.force_reason}"
        self.log.warning(line)
        with open(os.path.join(self.coursedir.root, RELEASE_LOG), "a", encoding="utf-8") as log:
            log.write(line + "\n")
