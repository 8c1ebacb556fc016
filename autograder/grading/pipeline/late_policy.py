"""The term's late policy as nbgrader's late-submission plugin.

nbgrader's ``AssignLatePenalties`` asks its plugin for each late notebook's penalty at every
autograde, from the submission's timestamp and its due date with the student's extension,
after resetting the old one: a changed due date, timestamp or extension gives a new penalty
at the next grading. The policy is ``[late_policy]`` of the course root's ``term.toml``
(``term.LatePolicy``): ``autograd-course autograde`` reads it there and sends it with every
job's config (``policy``, JSON); a plain ``nbgrader autograde`` run in the course root reads
``term_file`` itself.
"""

import json
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Unicode

from autograder.grading.course.term import LatePolicy, read_late_policy


def policy_config(term_file: Path) -> dict:
    """The plugin's config for the policy of ``term_file``, for a job's nbgrader config."""
    return {"policy": read_late_policy(term_file).as_json()}


class TermLatePolicy(LateSubmissionPlugin):
    """nbgrader's late penalty, by the term's policy: none, zero, or a percent per started
    hour or day late with a cap and a grace period."""

    term_file = Unicode(
        "term.toml", help="the term file, relative to the folder nbgrader runs in"
    ).tag(config=True)
    policy = Unicode("", help="the policy itself, as JSON (set by autograd-course)").tag(
        config=True
    )

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        """The points ``student_id`` loses on a notebook scored ``score``."""
        chosen = LatePolicy(**json.loads(self.policy)) if self.policy else None
        chosen = chosen or read_late_policy(Path(self.term_file))
        penalty = chosen.penalty(score, total_seconds_late)
        self.log.info(
            "late by %.0f s: %s: penalty %g of %g", total_seconds_late, chosen.describe(),
            penalty, score,
        )  # fmt: skip
        return penalty
