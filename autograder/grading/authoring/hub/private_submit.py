"""nbgrader's submit, then the hand-in closed to the rest of the class.

nbgrader leaves a submission readable by everyone (files 0644, the folder 0777) and hidden
only by the random part of its name. Here the hand-in is then the student's and the
instructor's group's alone, and ``nbgrader collect`` reads it through that group: the
inbound folder is set-group-id with the instructor's group, so what is made in it takes that
group; nbgrader's copy loses the bit on the hand-in's own folder (``copytree`` copies the
source folder's mode), and the files it writes afterwards took the student's group. So the
hand-in is rebuilt in a fresh folder of the inbound, then closed.

The hub copies this file, as the module ``autograd_hub_submit``, into the students'
environment (which has nbgrader and not this package) and names it in each student's
nbgrader settings; it imports nothing of the course.
"""

import os
import shutil

from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import get_username

FILE_MODE = 0o640  # the student, and the instructor's group reading
FOLDER_MODE = 0o750
HAND_IN_MODE = 0o770  # the instructor's group may also remove it, as nbgrader intends


def rebuilt_in_place(handed_in: str) -> None:
    """Copy ``handed_in`` into a new folder beside it (which takes the inbound's group), put
    that one in its place, and take every permission of "others" away."""
    fresh = handed_in + ".private"
    os.mkdir(fresh)
    for folder, subfolders, files in os.walk(handed_in):
        target = os.path.join(fresh, os.path.relpath(folder, handed_in))
        for name in subfolders:
            os.mkdir(os.path.join(target, name))
        for name in files:
            shutil.copyfile(os.path.join(folder, name), os.path.join(target, name))
    shutil.rmtree(handed_in)
    os.rename(fresh, handed_in)
    for folder, _, files in os.walk(handed_in):
        for name in files:
            os.chmod(os.path.join(folder, name), FILE_MODE)
        os.chmod(folder, HAND_IN_MODE if folder == handed_in else FOLDER_MODE)


class PrivateSubmit(ExchangeSubmit):
    """``nbgrader submit`` whose hand-in only its student and the instructors may open, made
    under the student's own name only."""

    def init_dest(self) -> None:
        """Refuse ``--student`` naming anyone else (collect would refuse the hand-in later,
        as one its student did not make; better said now)."""
        claimed, me = self.coursedir.student_id, get_username()
        if claimed not in ("", "*", me):
            self.fail(f"you hand in as yourself ({me}), never as {claimed}: leave out --student")
        super().init_dest()

    def copy_files(self) -> None:
        """Submit as nbgrader does, then rebuild the hand-in closed to other students."""
        super().copy_files()
        rebuilt_in_place(os.path.join(self.inbound_path, self.assignment_filename))
