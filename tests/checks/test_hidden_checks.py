"""hidden_checks(Tensor): the visible checks with the notebook's tensor class given, quiet."""

import numpy as np
import pytest

from autograder import check_parity, hidden_checks
from autograder.engine.tensor import Tensor

INPUTS = {"a": np.arange(1.0, 4.0), "c": np.full(3, 2.0)}


def message(call) -> str:
    with pytest.raises(AssertionError) as info:
        call()
    return str(info.value)


def test_a_passing_hidden_check_prints_nothing_and_reports_as_check_parity(capsys):
    checks = hidden_checks(Tensor)
    report = checks.parity(lambda a, c: (a * c).sum(), INPUTS, requires_grad=["a"])
    checks.graph_like(lambda a, c: (a * a + a * c).sum(), INPUTS, requires_grad=["a"])
    assert capsys.readouterr().out == ""
    assert report == check_parity(
        lambda a, c: (a * c).sum(), INPUTS, tensor_type=Tensor, requires_grad=["a"], quiet=True
    )


def test_a_failing_hidden_check_says_what_the_check_says():
    checks = hidden_checks(Tensor)
    wrong, torch_fn = (lambda a, c: a + a), (lambda a, c: a * 3.0)
    assert message(lambda: checks.parity(wrong, INPUTS, torch_fn=torch_fn)) == message(
        lambda: check_parity(wrong, INPUTS, tensor_type=Tensor, torch_fn=torch_fn, quiet=True)
    )
    with pytest.raises(ValueError, match=r"requires_grad names unknown inputs \['z'\]"):
        checks.graph_like(lambda a, c: a, INPUTS, requires_grad=["z"])
