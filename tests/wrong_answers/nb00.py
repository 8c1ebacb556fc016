"""00's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "00-recipe"

WRONG = [
    WrongAnswer(
        "no_grad.__exit__ turns grad mode on instead of restoring the previous state",
        A,
        "no_grad",
        "_grad_enabled = self._previous",
        "_grad_enabled = True",
        "test_no_grad",
        "put back the state saved on entry",
    ),
]
