"""nbgrader's submit, then the hand-in closed to the rest of the class.

nbgrader leaves a submission readable by everyone (files 0644, the folder 0777) and hidden
only by the random part of its name. Here the folder and its files are then the student's
and the instructor's group's alone: the inbound folder is set-group-id with the instructor's
group, so a hand-in inherits it, and ``nbgrader collect`` reads it through that group.

The hub copies this file, as the module ``autograd_hub_submit``, into the students'
environment (which has nbgrader and not this package) and names it in each student's
nbgrader settings; it imports nothing of the course.
"""

import os

from nbgrader.exchange.default.submit import ExchangeSubmit

FILE_MODE = 0o640  # the student, and the instructor's group reading
FOLDER_MODE = 0o750
HAND_IN_MODE = 0o770  # the instructor's group may also remove it, as nbgrader intends


class PrivateSubmit(ExchangeSubmit):
    """``nbgrader submit`` whose hand-in only its student and the instructors may open."""

    def copy_files(self) -> None:
        """Submit as nbgrader does, then take every permission of "others" away."""
        super().copy_files()
        handed_in = os.path.join(self.inbound_path, self.assignment_filename)
        for folder, _, files in os.walk(handed_in):
            for name in files:
                os.chmod(os.path.join(folder, name), FILE_MODE)
            if folder != handed_in:
                os.chmod(folder, FOLDER_MODE)
        os.chmod(handed_in, HAND_IN_MODE)
