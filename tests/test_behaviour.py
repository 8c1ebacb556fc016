"""Tests for autograder.checks.behaviour: misuse errors and autograd flags, compared with torch."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from autograder.checks.behaviour import check_flags, check_raises_like
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
    assert out == "flags requires_grad, is_leaf, grad is None agree with torch for a, b, c\n"


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
    assert lines[1].split() == ["tensor", "flag", "torch", "yours"]
    assert lines[2].split() == ["c", "is_leaf", "False", "True"]
    assert lines[3].split() == ["c", "grad", "is", "None", "True", "False"]
    assert lines[4] == (
        "  hint (is_leaf): a tensor is a leaf when the user created it or it does not require grad"
    )
    assert lines[5] == (
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
