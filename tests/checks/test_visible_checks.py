"""Do the visible checks keep the text's promises? Each listed mistake (tests/wrong_answers/)
is typed into the student release over the reference answer, and the notebook runs up to the
check that must catch it: that check, and no cell before it, must fail, with words that tell
the student what to fix."""

import pytest
from visible_checks import WrongAnswer, failures
from wrong_answers import wrong_answers

from autograder.grading.course.repo_paths import assignments

LISTED = [a for a in assignments() if wrong_answers(a)]


@pytest.mark.parametrize("assignment", LISTED)
def test_every_listed_mistake_fails_its_visible_check(assignment):
    assert failures(wrong_answers(assignment), assignment) == []


def test_a_mistake_the_check_lets_through_and_a_vague_message_are_named():
    """The harness can fail: a harmless rewrite passes its check and is reported, and a
    mistake whose message lacks the promised words is reported with the message it gave."""
    harmless = WrongAnswer(
        "harmless", "00-recipe", "no_grad", "_grad_enabled = self._previous",
        "_grad_enabled = bool(self._previous)", "test_no_grad", "-",
    )  # fmt: skip
    vague = WrongAnswer(
        "vague", "00-recipe", "scalar", "derivative = exponent * self.data ** (exponent - 1)",
        "derivative = exponent * self.data**exponent", "test_scalar_ops", "words no check says",
    )  # fmt: skip
    problems = failures([harmless, vague], "00-recipe")
    assert problems[0] == "harmless: test_no_grad passes"
    assert problems[1].startswith("vague: test_scalar_ops fails without 'words no check says'")
