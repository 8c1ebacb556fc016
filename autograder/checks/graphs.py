"""The recorded graph behind a tensor, for torch and for the student's engine alike.

Both expose the same surface: ``tensor.grad_fn`` is a node with ``name()`` and
``next_functions`` (pairs ``(node or None, index)``); a leaf's node has ``variable``. So one
walk serves both to compare the shapes of two graphs (drawing them: ``graph_drawing``).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograder.checks.compare import hint_line
from autograder.checks.language import tr
from autograder.checks.optional_torch import torch


@dataclass
class GraphNode:
    """One node of a walked graph: an operation or a leaf (by its input name)."""

    label: str
    leaf: str | None = None
    children: list["GraphNode"] = field(default_factory=list)

    def shape(self) -> tuple:
        """The structure without operation names, which differ between torch and the engine."""
        if self.leaf is not None:
            return ("leaf", self.leaf)
        return ("op", tuple(child.shape() for child in self.children))

    def lines(self, depth: int = 0) -> list[str]:
        text = f"{'  ' * depth}{self.label}" + (f" [{self.leaf}]" if self.leaf else "")
        return [text, *(line for child in self.children for line in child.lines(depth + 1))]


def walk_graph(root: Any, leaves: Mapping[str, Any]) -> GraphNode | None:
    """The graph behind ``root`` as GraphNodes; ``leaves`` names the leaf tensors.

    Inputs that send no gradient (``(None, 0)`` entries) are left out: torch drops some of
    them (``2 - x`` has one entry) where the engine keeps a constant, so only the
    gradient-carrying structure is compared.
    """
    names = {id(tensor): name for name, tensor in leaves.items()}
    leaf_nodes: dict[str, int] = {}

    def visit(node: Any) -> GraphNode:
        variable = getattr(node, "variable", None)
        if variable is not None:
            name = names.get(id(variable), "?")
            if leaf_nodes.setdefault(name, id(node)) != id(node):
                raise AssertionError(
                    tr(
                        "leaf {name} is reached through two different nodes: a leaf must have "
                        "one AccumulateGrad node, made once and reused (torch caches it)",
                        name=repr(name),
                    )
                )
            return GraphNode(node.name().split("::")[-1], leaf=name)
        children = [visit(child) for child, _ in node.next_functions if child is not None]
        return GraphNode(node.name(), children=children)

    return None if root.grad_fn is None else visit(root.grad_fn)


def check_graph_like(
    fn: Callable[..., Any],
    inputs: Mapping[str, Any],
    *,
    tensor_type: type,
    requires_grad: list[str] | None = None,
    quiet: bool = False,
) -> None:
    """Assert that ``fn`` records the same graph in the engine as in torch.

    Both sides are built from the same arrays; the graphs are compared node by node from
    the output (operations and which leaf each path ends at), ignoring operation names.
    """
    __tracebackhide__ = True  # tracebacks show the student's code, not ours
    if not callable(fn):
        raise TypeError(f"check_graph_like: fn must be callable, got {type(fn).__name__}")
    arrays = {name: np.asarray(value) for name, value in inputs.items()}
    wanted = set(arrays) if requires_grad is None else set(requires_grad)
    unknown = wanted - set(arrays)
    if unknown:
        raise ValueError(f"check_graph_like: requires_grad names unknown inputs {sorted(unknown)}")
    engine_leaves = {n: tensor_type(a.copy(), requires_grad=n in wanted) for n, a in arrays.items()}
    torch_leaves = {n: torch.tensor(a, requires_grad=n in wanted) for n, a in arrays.items()}
    engine_graph = walk_graph(fn(*engine_leaves.values()), engine_leaves)
    torch_graph = walk_graph(fn(*torch_leaves.values()), torch_leaves)
    engine_shape = engine_graph.shape() if engine_graph else None
    torch_shape = torch_graph.shape() if torch_graph else None
    if engine_shape != torch_shape:
        theirs = torch_graph.lines() if torch_graph else [tr("(no grad_fn)")]
        yours = engine_graph.lines() if engine_graph else [tr("(no grad_fn)")]
        raise AssertionError(
            tr(
                "graph does not match torch's (compared from the output: operations, and the "
                "leaf each path ends at)"
            )
            + "\n  torch:\n"
            + "\n".join(f"    {line}" for line in theirs)
            + "\n  "
            + tr("yours")
            + ":\n"
            + "\n".join(f"    {line}" for line in yours)
            + "\n  "
            + hint_line(
                tr(
                    "each input that requires grad should appear in next_functions as its "
                    "grad_fn, or as an AccumulateGrad node for a leaf; inputs that need no "
                    "gradient as None"
                )
            )
        )
    if not quiet:
        count = len(engine_graph.lines()) if engine_graph else 0
        print(tr("graph matches torch's: {count} nodes", count=count))
