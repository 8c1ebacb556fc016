"""Does check_graph_like pass on the engine's graph and fail, readably, on planted graph bugs?"""

import numpy as np
import pytest

from autograder.checks.graphs import check_graph_like
from autograder.engine import tensor as engine
from autograder.engine.tensor import AccumulateGrad, Context, Tensor

INPUTS = {"a": np.ones(3), "c": np.full(3, 2.0)}


def failure(**kwargs):
    with pytest.raises(AssertionError) as info:
        check_graph_like(lambda a, c: (a * a + a * c).sum(), INPUTS, tensor_type=Tensor, **kwargs)
    return str(info.value)


def test_the_reference_engine_records_torchs_graph(capsys):
    check_graph_like(
        lambda a, c: (a * a + a * c).sum(), INPUTS, tensor_type=Tensor, requires_grad=["a"]
    )
    assert "graph matches torch's" in capsys.readouterr().out


def test_a_new_leaf_node_per_use_is_named(monkeypatch):
    monkeypatch.setattr(
        engine,
        "graph_node",
        lambda t: t.grad_fn or (AccumulateGrad(t) if t.requires_grad else None),
    )
    message = failure(requires_grad=["a"])
    assert "leaf 'a' is reached through two different nodes" in message
    assert "made once and reused" in message


def test_missing_edges_show_both_graphs_and_a_hint(monkeypatch):
    monkeypatch.setattr(
        Context, "next_functions", property(lambda ctx: ((engine.graph_node(ctx.inputs[0]), 0),))
    )
    message = failure(requires_grad=["a", "c"])
    assert message.startswith("graph does not match torch's")
    assert "  torch:" in message and "  yours:" in message and "AccumulateGrad [c]" in message
    assert "hint: each input that requires grad should appear in next_functions" in message


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="fn must be callable"):
        check_graph_like("not a function", INPUTS, tensor_type=Tensor)
    with pytest.raises(ValueError, match=r"unknown inputs \['z'\]"):
        check_graph_like(lambda a, c: a, INPUTS, tensor_type=Tensor, requires_grad=["z"])
