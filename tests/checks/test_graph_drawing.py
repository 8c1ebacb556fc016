"""Does the graph drawing show every node once, the graph's edges, and the right numbers?

The tests read the data the figure is drawn from (boxes, edges, layers, label text), not
pixels; the numbers are compared with torch's own gradients, computed here independently.
"""

import numpy as np
import pytest
import torch

from autograder.checks.graph_drawing import (
    box_lines,
    draw_graphs,
    layers,
    layout,
    number_text,
    record_engine,
    record_torch,
    side_by_side,
    walk_engine,
)
from autograder.engine.scalar import Scalar
from autograder.engine.tensor import Mul, Tensor

WORKED = {"w": np.array([1.0, 2.0]), "b": np.array(0.5), "x": np.array([3.0, 4.0])}


def worked_loss(w, b, x):
    return ((w * x).sum() + b) ** 2


def shared(a, c):
    return (a * a + a * c).sum()


def reused_result(a, c):
    h = a * c  # a result used three times: its gradient adds up before it moves on
    return (h * h + h).sum()


rng = np.random.default_rng(5)
EXPRESSIONS = [
    (worked_loss, WORKED, ["w", "b"]),
    (shared, {"a": np.ones(3), "c": np.full(3, 2.0)}, ["a"]),
    (reused_result, {"a": np.array([1.0, -2.0]), "c": np.array([0.5, 3.0])}, None),
    # broadcasting, a matmul, a leaf used late and an activation
    (
        lambda x, w, b: ((x @ w + b).tanh() * (x @ w)).mean(),
        {"x": rng.standard_normal((4, 3)), "w": rng.standard_normal((3, 2)), "b": np.zeros(2)},
        None,
    ),
]


def test_the_worked_example_has_each_node_once_with_torchs_edges():
    drawn = record_torch(worked_loss, WORKED, requires_grad=["w", "b"])
    names = [box.name for box in drawn.boxes]
    # by depth: the leaves, then each result after the longest chain beneath it
    assert names == ["w", "b", "MulBackward0", "SumBackward0", "AddBackward0", "PowBackward0"]
    assert drawn.edges() == [(0, 2), (2, 3), (3, 4), (1, 4), (4, 5)]
    assert [box.leaf for box in drawn.boxes] == [True, True, False, False, False, False]


@pytest.mark.parametrize("fn, inputs, requires_grad", EXPRESSIONS)
def test_every_node_is_drawn_once_and_edges_follow_next_functions(fn, inputs, requires_grad):
    drawn = record_torch(fn, inputs, requires_grad=requires_grad)
    leaves = {
        n: torch.tensor(v, requires_grad=requires_grad is None or n in requires_grad)
        for n, v in inputs.items()
    }
    output = fn(*leaves.values())
    # The test's own walk: every node behind the output once, and every use of an input.
    nodes, uses, stack = {}, [], [output.grad_fn]
    while stack:
        node = stack.pop()
        if id(node) in nodes:
            continue
        nodes[id(node)] = node
        for child, _ in node.next_functions:
            if child is not None:
                uses.append((child.name(), node.name()))
                stack.append(child)
    assert len(drawn.boxes) == len(nodes)
    op_names = sorted(box.name for box in drawn.boxes if not box.leaf)
    assert op_names == sorted(n.name() for n in nodes.values() if not hasattr(n, "variable"))
    leaf_names = [box.name for box in drawn.boxes if box.leaf]
    assert len(leaf_names) == len(set(leaf_names))  # a leaf used twice is one box

    def kind(i):
        box = drawn.boxes[i]
        return "torch::autograd::AccumulateGrad" if box.leaf else box.name

    assert sorted((kind(s), kind(t)) for s, t in drawn.edges()) == sorted(uses)
    # inputs come before the results made from them, the output is last
    assert all(s < t for s, t in drawn.edges())
    assert drawn.boxes[-1].inputs and not any(len(drawn.boxes) - 1 in b.inputs for b in drawn.boxes)


def torch_grads(fn, inputs, requires_grad):
    """Leaves, output, and (name, d output / d result) of every operation, by torch's hooks."""
    leaves = {
        n: torch.tensor(v, requires_grad=requires_grad is None or n in requires_grad)
        for n, v in inputs.items()
    }
    output = fn(*leaves.values())
    seen, stack, results = set(), [output.grad_fn], []
    while stack:
        node = stack.pop()
        if id(node) in seen or hasattr(node, "variable"):
            continue
        seen.add(id(node))
        # a pre-hook sees the gradient arriving at the node: that of its result
        node.register_prehook(lambda grads, n=node: results.append((n.name(), grads[0])))
        stack.extend(child for child, _ in node.next_functions if child is not None)
    output.backward()
    return leaves, output, sorted((n, g.numpy().round(9).tolist()) for n, g in results)


@pytest.mark.parametrize("fn, inputs, requires_grad", EXPRESSIONS)
def test_values_and_grads_in_the_boxes_are_torchs(fn, inputs, requires_grad):
    drawn = record_torch(fn, inputs, requires_grad=requires_grad)
    leaves, output, results = torch_grads(fn, inputs, requires_grad)
    for box in drawn.boxes:
        assert box.value is not None and box.grad is not None, box.name
        if box.leaf:
            np.testing.assert_allclose(box.value, leaves[box.name].detach().numpy())
            np.testing.assert_allclose(box.grad, leaves[box.name].grad.numpy())
        assert box.grad.shape == box.value.shape, box.name
    np.testing.assert_allclose(drawn.boxes[-1].value, output.detach().numpy())
    np.testing.assert_allclose(drawn.boxes[-1].grad, 1.0)
    drawn_results = [(b.name, b.grad.round(9).tolist()) for b in drawn.boxes if not b.leaf]
    assert sorted(drawn_results) == results


def test_result_grads_are_d_output_d_result():
    # y = s + b with s = sum(w * x): d loss / d y = 2y = 23 reaches the sum and the product
    drawn = record_torch(worked_loss, WORKED, requires_grad=["w", "b"])
    lines = {box.name: box_lines(box) for box in drawn.boxes}
    assert lines["MulBackward0"] == ["MulBackward0", "data [3, 8]", "grad [23, 23]"]
    assert lines["AddBackward0"] == ["AddBackward0", "data 11.5", "grad 23"]
    assert lines["PowBackward0"] == ["PowBackward0", "data 132.25", "grad 1"]
    assert lines["w"] == ["w", "data [1, 2]", "grad [69, 92]"]


@pytest.mark.parametrize("fn, inputs, requires_grad", EXPRESSIONS)
def test_the_engine_drawing_matches_torchs_box_for_box(fn, inputs, requires_grad):
    ours = record_engine(fn, inputs, tensor_type=Tensor, requires_grad=requires_grad)
    theirs = record_torch(fn, inputs, requires_grad=requires_grad)
    # operation names may differ (torch's MmBackward0 for a matmul); leaves and edges may not
    assert [b.name for b in ours.boxes if b.leaf] == [b.name for b in theirs.boxes if b.leaf]
    assert [b.leaf for b in ours.boxes] == [b.leaf for b in theirs.boxes]
    assert ours.edges() == theirs.edges()
    for mine, torchs in zip(ours.boxes, theirs.boxes, strict=True):
        np.testing.assert_allclose(mine.value, torchs.value, err_msg=mine.name)
        np.testing.assert_allclose(mine.grad, torchs.grad, err_msg=mine.name)


def test_a_wrong_backward_rule_shows_in_the_engines_numbers(monkeypatch):
    monkeypatch.setattr(Mul, "backward", staticmethod(lambda ctx, g: (g * 2, g * 2)))
    ours = record_engine(worked_loss, WORKED, tensor_type=Tensor, requires_grad=["w", "b"])
    lines = {box.name: box_lines(box) for box in ours.boxes}
    assert lines["w"] == ["w", "data [1, 2]", "grad [46, 46]"]  # torch: [69, 92]


def test_results_gradients_come_from_the_students_own_backward(monkeypatch):
    # a backward that stores twice the gradient: every box shows it, results included, since
    # the drawing has no backward pass of its own to fall back on
    honest = Scalar.backward

    def doubling(self):
        honest(self)
        leaves = [p for node in nodes_of(self) for p, _ in node.parents if p.is_leaf]
        for leaf in {id(leaf): leaf for leaf in leaves}.values():
            leaf.grad *= 2

    def nodes_of(node):
        return [node, *[n for p, _ in node.parents for n in nodes_of(p)]]

    monkeypatch.setattr(Scalar, "backward", doubling)
    ours = record_engine(lambda x: x**2 + 3 * x, {"x": 2.0}, tensor_type=Scalar)
    assert [box_lines(b)[2] for b in ours.boxes] == ["grad 14", "grad 2", "grad 2", "grad 1"]
    monkeypatch.setattr(Scalar, "backward", lambda self: (_ for _ in ()).throw(NotImplementedError))
    with pytest.raises(NotImplementedError):
        record_engine(lambda x: x**2 + 3 * x, {"x": 2.0}, tensor_type=Scalar)


def test_the_scalar_engine_shows_local_derivatives_on_its_arrows():
    ours = record_engine(lambda x: x**2 + 3 * x, {"x": 2.0}, tensor_type=Scalar)
    theirs = record_torch(lambda x: x**2 + 3 * x, {"x": 2.0})
    assert [box_lines(b)[1:] for b in ours.boxes] == [box_lines(b)[1:] for b in theirs.boxes]
    assert box_lines(ours.boxes[0]) == ["x", "data 2", "grad 7"]
    assert [b.notes for b in ours.boxes] == [(), ("×3",), ("×4",), ("×1", "×1")]
    assert ours.edges() == theirs.edges() == [(0, 1), (0, 2), (2, 3), (1, 3)]


def test_layers_go_left_to_right_and_each_box_has_its_own_place():
    drawn = record_torch(worked_loss, WORKED, requires_grad=["w", "b"])
    column = layers(drawn)
    assert all(column[s] < column[t] for s, t in drawn.edges())
    assert column == [0, 2, 1, 2, 3, 4]  # b sits just left of the add that uses it
    positions = layout(drawn)
    assert len(set(positions)) == len(drawn.boxes)


def test_walking_an_engine_output_shows_what_the_engine_keeps():
    leaves = {n: Tensor(v, requires_grad=n != "x") for n, v in WORKED.items()}
    output = worked_loss(*leaves.values())
    output.backward()
    drawn = walk_engine(output, leaves)
    assert [box_lines(b) for b in drawn.boxes][:3] == [
        ["w", "data [1, 2]", "grad [69, 92]"],
        ["b", "data 0.5", "grad 23"],
        ["MulBackward0", "data [3, 8]", "grad not kept"],
    ]


def test_numbers_are_written_out_when_few():
    assert number_text(np.array(132.25)) == "132.25"
    assert number_text(np.array([1.0, -0.5])) == "[1, -0.5]"
    assert number_text(np.ones((3, 4))) == "(3, 4), norm 3.46"
    assert number_text(None) == "not kept"


def test_side_by_side_is_a_png_of_two_panels():
    drawing = side_by_side(worked_loss, WORKED, tensor_type=Tensor, requires_grad=["w", "b"])
    assert drawing._repr_png_().startswith(b"\x89PNG")
    assert [ax.get_title() for ax in drawing.figure.axes] == ["your engine", "torch"]
    assert repr(drawing) == "your engine: 6 nodes, torch: 6 nodes"


def test_old_notebooks_draw_graphs_still_draws_from_two_outputs():
    import matplotlib.pyplot as plt

    engine_leaves = {n: Tensor(v, requires_grad=n != "x") for n, v in WORKED.items()}
    torch_leaves = {n: torch.tensor(v, requires_grad=n != "x") for n, v in WORKED.items()}
    figure = draw_graphs(
        worked_loss(*engine_leaves.values()),
        worked_loss(*torch_leaves.values()),
        engine_leaves,
        torch_leaves,
    )
    assert figure in [plt.figure(n) for n in plt.get_fignums()]  # plt.show() shows it
    assert [ax.get_title() for ax in figure.axes] == ["your engine", "torch"]
    plt.close(figure)


def test_bad_requests_are_named():
    with pytest.raises(ValueError, match="draw a scalar output"):
        record_torch(lambda a: a * 2, {"a": np.ones(2)})
    with pytest.raises(ValueError, match="draw a scalar output"):
        record_engine(lambda a: a * 2, {"a": np.ones(2)}, tensor_type=Tensor)
    with pytest.raises(ValueError, match=r"unknown inputs \['z'\]"):
        record_torch(worked_loss, WORKED, requires_grad=["z"])
    with pytest.raises(ValueError, match="does not require grad"):
        record_torch(worked_loss, WORKED, requires_grad=[])
