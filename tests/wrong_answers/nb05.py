"""05's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "05-common-pitfalls"

WRONG = [
    WrongAnswer(
        "add_ rebinds .data to a new array instead of writing into it",
        A,
        "tensor",
        "self.data += self._lift(other).data",
        "self.data = self.data + self._lift(other).data",
        "test_inplace",
        "must write into that array in place",
    ),
    WrongAnswer(
        "mul_ changes nothing",
        A,
        "tensor",
        "self.data *= self._lift(other).data",
        "pass",
        "test_inplace",
        "t after t.mul_(3.0)",
    ),
    WrongAnswer(
        "mul_ does not bump the version counter",
        A,
        "tensor",
        "self.data *= self._lift(other).data\n        self._version += 1",
        "self.data *= self._lift(other).data",
        "test_inplace",
        "must bump t._version by one",
    ),
]
