"""Tests for autograder.checks.behaviour: misuse errors and autograd flags, compared with torch."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from autograder.checks.behaviour import check_flags, check_raises_like
from autograder.checks.text_table import read_columns
from autograder.engine.tensor import Tensor

X = np.arange(1.0, 4.0)


def raiser(exc: Exception):
    """A zero-argument callable that raises ``exc`` (a planted engine behaviour)."""

    def call():
        raise exc

    return call


def engine_backward_on_vector():
    (Tensor(X, requires_grad=True) * 2.0).backward()


def torch_backward_on_vector():
    (torch.tensor(X, requires_grad=True) * 2.0).backward()


# --- check_raises_like ------------------------------------------------------------------


def test_same_error_class_passes(capsys):
    check_raises_like(
        engine_backward_on_vector,
        torch_backward_on_vector,
        what="backward on a non-scalar",
        match="scalar",
    )
    out = capsys.readouterr().out
    assert out == "misuse 'backward on a non-scalar' raises RuntimeError in both\n"


def test_no_error_in_both_passes(capsys):
    check_raises_like(
        lambda: (Tensor(X, requires_grad=True) * 2.0).sum().backward(),
        lambda: (torch.tensor(X, requires_grad=True) * 2.0).sum().backward(),
        what="backward on a scalar",
    )
    assert capsys.readouterr().out == "'backward on a scalar' raises nothing in both\n"


def test_engine_raising_nothing_fails():
    with pytest.raises(AssertionError) as info:
        check_raises_like(lambda: None, torch_backward_on_vector, what="backward on a non-scalar")
    message = str(info.value)
    assert message.startswith(
        "misuse 'backward on a non-scalar': torch raises "
        "RuntimeError('grad can be implicitly created only for scalar outputs') "
        "but yours raised nothing"
    )
    assert "hint: detect this case and raise RuntimeError" in message


def test_engine_raising_another_class_fails_and_chains_it():
    planted = ValueError("shapes (3,) and () differ")
    with pytest.raises(AssertionError) as info:
        check_raises_like(raiser(planted), torch_backward_on_vector, what="backward on a vector")
    assert "but yours raised ValueError('shapes (3,) and () differ')" in str(info.value)
    assert info.value.__cause__ is planted  # the student's traceback stays reachable


def test_message_must_match_when_asked():
    with pytest.raises(AssertionError) as info:
        check_raises_like(
            raiser(RuntimeError("oops")),
            torch_backward_on_vector,
            what="backward on a vector",
            match=r"scalar outputs?",
        )
    message = str(info.value)
    assert "its message does not match /scalar outputs?/ (case-insensitive)" in message
    assert "yours: RuntimeError('oops')" in message


def test_match_is_case_insensitive(capsys):
    check_raises_like(
        raiser(RuntimeError("only SCALAR outputs")),
        torch_backward_on_vector,
        what="backward on a vector",
        match="scalar",
        quiet=True,
    )
    assert capsys.readouterr().out == ""


def test_engine_raising_where_torch_does_not_fails():
    with pytest.raises(AssertionError) as info:
        check_raises_like(
            raiser(TypeError("unsupported operand")),
            lambda: torch.ones(3) * 2,
            what="tensor times a number",
        )
    message = str(info.value)
    assert message.startswith(
        "'tensor times a number': torch raises nothing but yours raised "
        "TypeError('unsupported operand')"
    )


def test_torch_subclass_of_a_builtin_error_asks_for_the_builtin():
    # torch.linalg raises its own RuntimeError subclass; the engine may raise RuntimeError.
    singular = torch.zeros(2, 2)
    check_raises_like(
        raiser(RuntimeError("singular matrix")),
        lambda: torch.linalg.inv(singular),
        what="inverse of a singular matrix",
        quiet=True,
    )


def test_raises_like_needs_callables():
    with pytest.raises(TypeError, match="zero-argument callables"):
        check_raises_like(None, torch_backward_on_vector, what="x")


# --- check_flags ------------------------------------------------------------------------


def engine_graph():
    a = Tensor(X, requires_grad=True)
    b = Tensor(X * 2)
    c = a * b
    c.sum().backward()
    return {"a": a, "b": b, "c": c}


def torch_graph():
    a = torch.tensor(X, requires_grad=True)
    b = torch.tensor(X * 2)
    c = a * b
    c.sum().backward()
    return {"a": a, "b": b, "c": c}


def test_flags_agree(capsys):
    check_flags(engine_graph(), torch_graph())
    out = capsys.readouterr().out
    assert out == "flags requires_grad, is_leaf, grad is None agree with torch for 'a', 'b', 'c'\n"


def test_flags_accept_callables_and_other_flags(capsys):
    engine, torch_side = engine_graph(), torch_graph()
    check_flags(
        {"c": lambda: engine["c"]},
        {"c": lambda: torch_side["c"]},
        flags=("grad_fn is None", "requires_grad"),
    )
    assert "flags grad_fn is None, requires_grad agree" in capsys.readouterr().out


def test_flag_disagreements_are_tabled_with_hints():
    engine = engine_graph()
    # Planted: c claims to be a leaf and carries a gradient, as if backward filled every node.
    engine["c"] = SimpleNamespace(requires_grad=True, is_leaf=True, grad=np.ones(3))
    with pytest.raises(AssertionError) as info:
        check_flags(engine, torch_graph())
    lines = str(info.value).splitlines()
    assert lines[0] == "flags disagree with torch (2 of 9 checks):"
    assert read_columns(str(info.value))[:2] == [
        {"tensor": "c", "flag": "is_leaf", "torch": "False", "yours": "True"},
        {"tensor": "c", "flag": "grad is None", "torch": "True", "yours": "False"},
    ]
    assert set(lines[2].strip()) == {"-", " "}  # the table layout of the whole package
    assert lines[5] == (
        "  hint (is_leaf): a tensor is a leaf when the user created it or it does not require grad"
    )
    assert lines[6] == (
        "  hint (grad is None): only leaves that require grad get .grad after backward, "
        "unless retain_grad() was called"
    )


def test_missing_engine_attribute_is_a_disagreement():
    with pytest.raises(AssertionError, match=r"missing \(no \.is_leaf\)"):
        check_flags(
            {"a": SimpleNamespace(requires_grad=True, grad=None)},
            {"a": torch.ones(2, requires_grad=True)},
        )


def test_flags_need_the_same_names():
    with pytest.raises(ValueError, match="must name the same tensors"):
        check_flags({"a": Tensor(X)}, {"b": torch.tensor(X)})


def test_unknown_flag_is_an_error():
    with pytest.raises(ValueError, match="unknown flag 'is_leafy'"):
        check_flags({"a": Tensor(X)}, {"a": torch.tensor(X)}, flags=["is_leafy"])


# --- objects that lie, and bad inputs ---------------------------------------------------


class AgreesWithEverything:
    """A planted flag value: equal to anything and true, so a naive == would pass it."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __bool__(self):
        return True

    __hash__ = object.__hash__


def test_a_flag_that_equals_anything_is_not_a_bool():
    liar = AgreesWithEverything()
    engine = {"a": SimpleNamespace(requires_grad=liar, is_leaf=liar, grad=None)}
    with pytest.raises(AssertionError) as info:
        check_flags(engine, {"a": torch.ones(2, requires_grad=True)})
    message = str(info.value)
    assert message.splitlines()[0] == "flags disagree with torch (2 of 3 checks):"
    assert "not a bool (AgreesWithEverything)" in message
    assert "hint: a flag is True or False (a bool), as torch's is" in message


def test_a_one_for_true_is_not_a_bool_but_a_numpy_bool_is():
    torch_side = {"a": torch.ones(2, requires_grad=True)}
    with pytest.raises(AssertionError, match=r"not a bool \(int\)"):
        check_flags({"a": SimpleNamespace(requires_grad=1, is_leaf=True, grad=None)}, torch_side)
    honest = SimpleNamespace(requires_grad=np.True_, is_leaf=np.bool_(True), grad=None)
    check_flags({"a": honest}, torch_side, quiet=True)


def test_a_callable_engine_tensor_is_inspected_not_called():
    reference = torch.ones(2, requires_grad=True)

    class CallableTensor:
        """Planted: wrong flags of its own, torch's tensor (right flags) when called."""

        requires_grad = False
        is_leaf = False
        grad = None

        def __call__(self):
            return reference

    with pytest.raises(AssertionError, match="2 of 3 checks"):
        check_flags({"a": CallableTensor()}, {"a": reference})


def test_a_torch_tensor_in_place_of_the_engines_is_refused():
    reference = torch.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="engine tensor 'a' is a torch.Tensor"):
        check_flags({"a": lambda: reference}, {"a": reference})


def test_a_non_boolean_torch_attribute_is_not_a_flag():
    with pytest.raises(ValueError, match="flag 'shape' is not a bool in torch"):
        check_flags({"a": Tensor(X)}, {"a": torch.tensor(X)}, flags=["shape"])


def test_an_error_that_fakes_its_class_is_judged_by_its_type():
    class DisguisedError(ValueError):
        """Planted: a ValueError whose __class__ claims RuntimeError (isinstance believes it)."""

        @property
        def __class__(self):
            return RuntimeError

    assert isinstance(DisguisedError(), RuntimeError)  # the lie works on a plain isinstance
    with pytest.raises(AssertionError, match="but yours raised DisguisedError"):
        check_raises_like(
            raiser(DisguisedError("scalar outputs only")),
            torch_backward_on_vector,
            what="backward on a non-scalar",
        )


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"match": "(unclosed"}, ValueError, "match '(unclosed' is not a valid regular expression"),
        ({"match": 3}, TypeError, "match must be a regular expression string or None; got 3"),
        ({"what": None}, TypeError, "what must be a non-empty string naming the misuse"),
    ],
)
def test_raises_like_bad_inputs_are_named(kwargs, error, text):
    arguments = {"what": "backward on a non-scalar", **kwargs}
    with pytest.raises(error) as info:
        check_raises_like(engine_backward_on_vector, torch_backward_on_vector, **arguments)
    assert text in str(info.value)


def test_an_unwritten_cell_is_not_written_yet_never_raises_as_torch_does():
    """The stub raises NotImplementedError, a RuntimeError: torch's RuntimeError must not
    make an unwritten exercise pass, nor call it the wrong message."""
    for match in (None, "does not require grad"):
        with pytest.raises(AssertionError) as info:
            check_raises_like(
                raiser(NotImplementedError()),
                torch_backward_on_vector,
                what="backward on a non-scalar",
                match=match,
            )
        message = str(info.value)
        assert "not written yet" in message and "as torch does" not in message
        assert "# YOUR CODE HERE" in message
