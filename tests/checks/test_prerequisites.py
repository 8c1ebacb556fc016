"""In the student kit (no reference engine), does a check that needs another exercise run the
student's own part, and say which exercise to finish first when that part is unwritten or wrong?"""

import pytest

from autograder.checks import given
from autograder.checks.prerequisites import reference_installed


@pytest.fixture
def kit(monkeypatch):
    """This process as the student kit's kernel: the reference engine cannot be imported."""
    monkeypatch.setattr(given, "reference_installed", lambda: False)


def make_tensor(add_):
    """A notebook class whose ``step`` (the exercise checked) calls ``add_`` (another one)."""

    class Tensor:
        def __init__(self):
            self.value = 0

        def step(self):
            self.add_(2)
            return self.value

    Tensor.add_ = add_
    return Tensor


def unwritten(self, amount):
    raise NotImplementedError()


def wrong(self, amount):
    self.value -= amount


def right(self, amount):
    self.value += amount


def test_the_repository_has_the_reference_so_it_is_no_kit():
    assert reference_installed()
    assert not given.kit_mode()


def test_a_trusted_kernel_is_never_in_kit_mode_even_without_the_engine(kit, monkeypatch):
    monkeypatch.setattr(given, "in_trusted_kernel", lambda: True)
    assert not given.kit_mode()


def test_an_unwritten_other_part_is_named_instead_of_failing_the_check(kit):
    Tensor = make_tensor(unwritten)
    with pytest.raises(NotImplementedError, match=r"also runs your `Tensor.add_`, which is not"):
        with given.reference_methods(Tensor, "add_"):
            Tensor().step()


def test_the_write_first_error_is_shown_as_a_failed_check_is(kit):
    """In a kernel: no check-library frame and no chained stub traceback under the message;
    a student's own NotImplementedError is shown as IPython shows it."""
    from test_display import FakeShell, frame_modules

    from autograder.checks import tracebacks

    Tensor = make_tensor(unwritten)
    with pytest.raises(NotImplementedError) as info:
        with given.reference_methods(Tensor, "add_"):
            Tensor().step()
    error = info.value
    assert error.__cause__ is None and error.__suppress_context__
    assert "autograder.checks.prerequisites" in frame_modules(error.__traceback__)
    shell = FakeShell()
    tracebacks.show_quietly(shell, NotImplementedError, error, error.__traceback__)
    assert frame_modules(shell.shown[0][2]) == [__name__]
    with pytest.raises(NotImplementedError) as stub:
        Tensor().step()
    tracebacks.show_quietly(shell, NotImplementedError, stub.value, stub.value.__traceback__)
    assert shell.shown[1][1] is stub.value and len(frame_modules(shell.shown[1][2])) == 3


def test_a_wrong_other_part_is_named_in_a_note_under_the_failure(kit):
    Tensor = make_tensor(wrong)
    with pytest.raises(AssertionError) as info:
        with given.reference_methods(Tensor, "add_"):
            assert Tensor().step() == 2
    assert "this check also ran your `Tensor.add_`" in "\n".join(info.value.__notes__)


def test_the_kit_runs_the_students_own_part_and_restores_nothing(kit):
    Tensor = make_tensor(right)
    with given.reference_methods(Tensor, "add_"):
        assert Tensor().step() == 2
    assert Tensor.add_ is right


def test_a_failure_that_never_ran_the_other_part_gets_no_note(kit):
    Tensor = make_tensor(wrong)
    with pytest.raises(AssertionError) as info:
        with given.reference_parts({Tensor: ("add_",)}):
            assert Tensor().value == 1
    assert not getattr(info.value, "__notes__", [])


def test_the_checked_parts_own_stub_is_not_blamed_on_another(kit):
    Tensor = make_tensor(right)

    def step(self):
        raise NotImplementedError()

    Tensor.step = step
    with pytest.raises(NotImplementedError) as info:
        with given.reference_methods(Tensor, "add_"):
            Tensor().step()
    assert str(info.value) == ""


def test_exercises_alone_names_the_exercise_of_an_unwritten_part(kit):
    def run_backward(root):
        raise NotImplementedError()

    def checked_mul(root):  # stands for a check of exercise mul_div that runs backward
        return run_backward(root)

    namespace = {"run_backward": run_backward}
    exercises = given.Exercises("01-worked-example", namespace)
    with pytest.raises(NotImplementedError, match=r"`run_backward` \(exercise `backward`\)"):
        with exercises.alone("mul_div"):
            checked_mul(None)


def test_outside_the_kit_the_reference_is_lent_as_before():
    Tensor = make_tensor(unwritten)
    # the reference engine's add_ works on its own Tensor; here only that it replaced ours
    with given.reference_methods(Tensor, "add_"):
        assert Tensor.add_ is not unwritten
    assert Tensor.add_ is unwritten
