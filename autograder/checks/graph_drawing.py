"""Draw a backward graph with the value and gradient of every node, engine and torch alike.

A graph is first turned into plain data (:class:`DrawnGraph`: one :class:`GraphBox` per
node, inputs before their users), then laid out in topological layers, left to right, and
drawn with matplotlib only (no graphviz). Two ways to get the data:

- from an output (:func:`walk_engine`, :func:`walk_torch`): what the library keeps, that is
  every value and the leaves' gradients in the engine; in torch the leaves and the output
  (intermediate results are not reachable from ``grad_fn``);
- from an expression (:func:`record_engine`, :func:`record_torch`): the expression is run on
  fresh leaves, every intermediate result is kept, backward runs, and every node gets its
  value and its gradient. :func:`side_by_side` draws the two recordings next to each other.

Nodes are the tensors (results and leaves); an arrow goes from an input to the result made
from it. Inputs that need no gradient are left out, as torch leaves them out of its graph.
"""

from __future__ import annotations  # torch.Tensor annotations: torch may be absent

import inspect
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autograder.checks.language import marked, tr, translated
from autograder.checks.optional_torch import AVAILABLE, torch

# A plain base where torch is absent (the student's kernel while grading): never used there.
TorchFunctionMode = torch.overrides.TorchFunctionMode if AVAILABLE else object

# Arrays up to this many numbers are written out in a box; larger ones by shape and norm.
SHOWN_NUMBERS = 4


# Default title of the engine side, translated where drawn (the checks' language).
YOUR_ENGINE = marked("your engine")


@dataclass(frozen=True)
class GraphBox:
    """One node: a leaf (by its input's name) or an operation's result."""

    name: str
    leaf: bool
    value: np.ndarray | None  # None: the library does not keep it
    grad: np.ndarray | None  # None: no gradient kept or computed
    inputs: tuple[int, ...] = ()  # boxes it was computed from, with repeats (x * x)
    notes: tuple[str, ...] = ()  # one per input: the local derivative, where it is known


@dataclass(frozen=True)
class DrawnGraph:
    """Every node of a graph once, each after the nodes it was computed from; output last."""

    title: str
    boxes: tuple[GraphBox, ...]

    def edges(self) -> list[tuple[int, int]]:
        """(input, result) pairs, one per use: ``x * x`` gives two."""
        return [(source, target) for target, box in enumerate(self.boxes) for source in box.inputs]


def number_text(array: np.ndarray | None) -> str:
    """A value or gradient as a box shows it: the numbers, or shape and norm when many."""
    if array is None:
        return "not kept"
    array = np.asarray(array, dtype=float)
    if array.size == 1:
        return f"{array.item():.5g}"
    if array.size <= SHOWN_NUMBERS:
        return "[" + ", ".join(f"{v:.3g}" for v in array.ravel()) + "]"
    return f"{tuple(array.shape)}, norm {np.linalg.norm(array):.3g}"


def box_lines(box: GraphBox) -> list[str]:
    """The text of one box: its name, its value and its gradient."""
    return [box.name, f"data {number_text(box.value)}", f"grad {number_text(box.grad)}"]


def _ordered(
    root: Any, inputs_of: Callable[[Any], list[tuple[Any, str]]], key: Callable[[Any], int]
) -> list[Any]:
    """Every node behind ``root`` once, each after its inputs, for drawing left to right.

    Nodes are gathered by following inputs, then sorted by depth (the longest chain of inputs
    beneath a node, found by relaxing every edge until nothing changes): enough for a small
    drawing, and no walk a backward pass could be lifted from.
    """
    found = {key(root): root}
    frontier = [root]
    while frontier:
        for child, _ in inputs_of(frontier.pop()):
            if key(child) not in found:
                found[key(child)] = child
                frontier.append(child)
    depth = dict.fromkeys(found, 0)
    settled = False
    while not settled:
        settled = True
        for node_key, node in found.items():
            below = max((depth[key(child)] + 1 for child, _ in inputs_of(node)), default=0)
            if below != depth[node_key]:
                depth[node_key], settled = below, False
    # found last first: among nodes of one depth, those met deepest come first (leaves in order)
    return sorted(reversed(found.values()), key=lambda node: depth[key(node)])


def _engine_inputs(tensor: Any) -> list[tuple[Any, str]]:
    """The inputs a gradient flows to, with the local derivative where the engine keeps one."""
    if hasattr(tensor, "parents"):  # notebook 00's Scalar: (input, d self / d input) pairs
        return [(parent, f"×{derivative:.3g}") for parent, derivative in tensor.parents]
    if getattr(tensor, "grad_fn", None) is None:
        return []
    return [(t, "") for t in tensor.grad_fn.inputs if t.requires_grad]


def _engine_op_name(tensor: Any) -> str:
    grad_fn = getattr(tensor, "grad_fn", None)
    return grad_fn.name() if grad_fn is not None else "result"


def walk_engine(
    output: Any,
    names: Mapping[str, Any],
    title: str = YOUR_ENGINE,
    grads: Mapping[int, np.ndarray] | None = None,
) -> DrawnGraph:
    """The engine's graph behind ``output``: values everywhere, gradients the engine keeps.

    ``names`` names the leaves; ``grads`` (by ``id`` of the tensor) adds the gradients of
    results, which the engine does not keep.
    """
    names_by_id = {id(tensor): name for name, tensor in names.items()}
    order = _ordered(output, _engine_inputs, id)
    index = {id(tensor): i for i, tensor in enumerate(order)}
    boxes = []
    for tensor in order:
        inputs = _engine_inputs(tensor)
        leaf = not inputs
        grad = tensor.grad if leaf else (grads or {}).get(id(tensor))
        boxes.append(
            GraphBox(
                name=names_by_id.get(id(tensor), "?") if leaf else _engine_op_name(tensor),
                leaf=leaf,
                value=np.asarray(tensor.data, dtype=float),
                grad=None if grad is None else np.asarray(getattr(grad, "data", grad), float),
                inputs=tuple(index[id(t)] for t, _ in inputs),
                notes=tuple(note for _, note in inputs) if any(n for _, n in inputs) else (),
            )
        )
    return DrawnGraph(title, tuple(boxes))


def _torch_inputs(node: Any) -> list[tuple[Any, str]]:
    return [(child, "") for child, _ in node.next_functions if child is not None]


def walk_torch(
    output: torch.Tensor,
    names: Mapping[str, torch.Tensor],
    title: str = "torch",
    results: Mapping[int, torch.Tensor] | None = None,
) -> DrawnGraph:
    """Torch's graph behind ``output``, walked through ``grad_fn.next_functions``.

    A leaf is an ``AccumulateGrad`` node, whose ``variable`` gives its value and gradient.
    An operation's result is not reachable from its node: ``results`` (by ``id`` of the
    node) supplies them; without it only the output's value is known.
    """
    if output.grad_fn is None:
        raise ValueError(f"{title}: the output has no grad_fn, so there is no graph to draw")
    results = {id(output.grad_fn): output, **(results or {})}
    names_by_id = {id(tensor): name for name, tensor in names.items()}
    order = _ordered(output.grad_fn, _torch_inputs, id)
    index = {id(node): i for i, node in enumerate(order)}
    boxes = []
    for node in order:
        variable = getattr(node, "variable", None)
        tensor = variable if variable is not None else results.get(id(node))
        keeps = tensor is not None and (tensor.is_leaf or tensor.retains_grad)
        grad = tensor.grad if keeps else None
        boxes.append(
            GraphBox(
                name=names_by_id.get(id(variable), "?") if variable is not None else node.name(),
                leaf=variable is not None,
                value=None if tensor is None else tensor.detach().double().numpy(),
                grad=None if grad is None else grad.detach().double().numpy(),
                inputs=tuple(index[id(child)] for child, _ in _torch_inputs(node)),
            )
        )
    return DrawnGraph(title, tuple(boxes))


def _leaf_arrays(
    inputs: Mapping[str, Any], requires_grad: list[str] | None
) -> tuple[dict[str, np.ndarray], set[str]]:
    arrays = {name: np.asarray(value, dtype=np.float64) for name, value in inputs.items()}
    wanted = set(arrays) if requires_grad is None else set(requires_grad)
    unknown = wanted - set(arrays)
    if unknown:
        raise ValueError(f"requires_grad names unknown inputs {sorted(unknown)}")
    return arrays, wanted


def _scalar_output(output: Any, library: str) -> None:
    if not getattr(output, "requires_grad", False):
        raise ValueError(f"{library}: the output does not require grad, so there is no graph")
    if np.asarray(output.data if library != "torch" else output.detach()).size != 1:
        raise ValueError(f"{library}: draw a scalar output (add .sum() or .mean())")


def _swap_input(user: Any, old: Any, new: Any) -> None:
    """Make ``user`` read ``new`` where it read ``old`` (Scalar's parents, Tensor's ctx)."""
    if hasattr(user, "parents"):
        user.parents = tuple((new if p is old else p, d) for p, d in user.parents)
    else:
        user.grad_fn.inputs = tuple(new if t is old else t for t in user.grad_fn.inputs)


def _result_grads(output: Any) -> dict[int, np.ndarray]:
    """d output / d result for every result behind ``output``, by the engine's own backward.

    The engine keeps gradients on leaves only, so each result in turn is replaced, where its
    users read it, by a fresh leaf with its value: the student's ``backward`` (keeping the
    graph, which notebook 02's engine frees otherwise) stores in that leaf what reaches the
    result. Run before the drawing's real backward; every node's ``.grad`` is put back after.
    """
    nodes = _ordered(output, _engine_inputs, id)
    grads_before = [node.grad for node in nodes]
    grads: dict[int, np.ndarray] = {id(output): np.ones_like(np.asarray(output.data, float))}
    keep_graph = "retain_graph" in inspect.signature(output.backward).parameters
    for result in nodes[:-1]:
        if not _engine_inputs(result):
            continue
        users = [node for node in nodes if any(t is result for t, _ in _engine_inputs(node))]
        stand_in = type(result)(result.data, requires_grad=True)
        for user in users:
            _swap_input(user, result, stand_in)
        try:
            output.backward(retain_graph=True) if keep_graph else output.backward()
        finally:
            for user in users:
                _swap_input(user, stand_in, result)
            for node, grad in zip(nodes, grads_before, strict=True):
                node.grad = grad
        if stand_in.grad is not None:
            grads[id(result)] = np.asarray(getattr(stand_in.grad, "data", stand_in.grad), float)
    return grads


def record_engine(
    fn: Callable[..., Any],
    inputs: Mapping[str, Any],
    *,
    tensor_type: type,
    requires_grad: list[str] | None = None,
    title: str = YOUR_ENGINE,
) -> DrawnGraph:
    """Run ``fn`` on fresh engine leaves, then backward: every node with value and gradient.

    Leaves show what the engine's own ``backward`` stored in ``.grad``; results show the
    gradient the engine's backward rules send them.
    """
    arrays, wanted = _leaf_arrays(inputs, requires_grad)
    leaves = {n: tensor_type(a.copy(), requires_grad=n in wanted) for n, a in arrays.items()}
    output = fn(*leaves.values())
    _scalar_output(output, title)
    grads = _result_grads(output)
    output.backward()
    return walk_engine(output, leaves, title, grads)


class _KeepResults(TorchFunctionMode):
    """Keeps every tensor that torch functions return while active, by its ``grad_fn``."""

    def __init__(self) -> None:
        super().__init__()
        self.results: dict[int, torch.Tensor] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        result = func(*args, **(kwargs or {}))
        for value in result if isinstance(result, tuple | list) else (result,):
            if isinstance(value, torch.Tensor) and value.grad_fn is not None:
                self.results[id(value.grad_fn)] = value
        return result


def record_torch(
    fn: Callable[..., Any],
    inputs: Mapping[str, Any],
    *,
    requires_grad: list[str] | None = None,
    title: str = "torch",
) -> DrawnGraph:
    """Run ``fn`` on fresh torch leaves (float64), then backward: values and gradients of all.

    Torch does not link a node to its result, so every result is kept as ``fn`` makes it
    (a TorchFunctionMode) and asked to keep its gradient (``retain_grad``).
    """
    arrays, wanted = _leaf_arrays(inputs, requires_grad)
    leaves = {n: torch.tensor(a, requires_grad=n in wanted) for n, a in arrays.items()}
    keep = _KeepResults()
    with keep:
        output = fn(*leaves.values())
    _scalar_output(output, title)
    for result in keep.results.values():
        result.retain_grad()
    output.retain_grad()
    output.backward()
    return walk_torch(output, leaves, title, keep.results)


def layers(graph: DrawnGraph) -> list[int]:
    """The column of each box: a result one right of its rightmost input; a leaf just left
    of its first user, so that a leaf used late (a bias) does not stretch across the figure."""
    column = [0] * len(graph.boxes)
    for i, box in enumerate(graph.boxes):
        column[i] = 1 + max((column[j] for j in box.inputs), default=-1)
    for i, box in enumerate(graph.boxes):
        if box.leaf:
            users = [column[t] for t, other in enumerate(graph.boxes) if i in other.inputs]
            column[i] = min(users, default=1) - 1
    return column


def layout(graph: DrawnGraph) -> list[tuple[float, float]]:
    """(x, y) of each box: x its layer; in a layer, boxes ordered by their inputs' heights."""
    column = layers(graph)
    y = [0.0] * len(graph.boxes)
    for layer in range(max(column, default=-1) + 1):
        members = [i for i, c in enumerate(column) if c == layer]

        def height(i: int) -> float:
            inputs = graph.boxes[i].inputs
            return -float(np.mean([y[j] for j in inputs])) if inputs else float(i)

        members.sort(key=height)
        for rank, i in enumerate(members):
            y[i] = (len(members) - 1) / 2 - rank
    return [(float(c), y[i]) for i, c in enumerate(column)]


def draw_graph(graph: DrawnGraph, ax: Any) -> None:
    """Draw ``graph`` on a matplotlib Axes: a box per node, an arrow per use of an input."""
    positions = layout(graph)
    texts = []
    for box, (x, y) in zip(graph.boxes, positions, strict=True):
        colour = "#dbeafe" if box.leaf else "#fef3c7"
        texts.append(
            ax.text(
                x,
                y,
                "\n".join(box_lines(box)),
                ha="center",
                va="center",
                fontsize=8,
                family="monospace",
                bbox={"boxstyle": "round,pad=0.4", "facecolor": colour, "edgecolor": "0.5"},
            )
        )
    counts: dict[tuple[int, int], int] = {}
    for source, target in graph.edges():
        counts[(source, target)] = counts.get((source, target), 0) + 1
    for (source, target), count in counts.items():
        ax.annotate(
            "",
            xy=positions[target],
            xytext=positions[source],
            arrowprops={
                "arrowstyle": "->",
                "color": "0.35",
                "patchA": texts[source].get_bbox_patch(),
                "patchB": texts[target].get_bbox_patch(),
                "shrinkA": 2,
                "shrinkB": 2,
            },
        )
        notes = [
            graph.boxes[target].notes[k]
            for k, s in enumerate(graph.boxes[target].inputs)
            if s == source and graph.boxes[target].notes
        ]
        label = (
            " ".join(notes) if notes else ("" if count == 1 else tr("used {count}×", count=count))
        )
        if label:
            (x0, y0), (x1, y1) = positions[source], positions[target]
            ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.12, label, ha="center", fontsize=7)
    xs = [x for x, _ in positions]
    ys = [y for _, y in positions]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.7, max(ys) + 0.7)
    ax.set_title(translated(graph.title))
    ax.axis("off")


@dataclass
class SideBySide:
    """The engine's graph and torch's, drawn next to each other; shows as a PNG in Jupyter."""

    engine: DrawnGraph
    torch: DrawnGraph
    figure: Figure = field(repr=False)

    def png(self) -> bytes:
        """The figure as PNG bytes, drawn on matplotlib's Agg canvas (no backend needed)."""
        buffer = io.BytesIO()
        FigureCanvasAgg(self.figure).print_png(buffer)
        return buffer.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()

    def __repr__(self) -> str:
        # the text Jupyter records beside the PNG: short, not every array of every box
        return ", ".join(
            tr("{title}: {count} nodes", title=translated(g.title), count=len(g.boxes))
            for g in (self.engine, self.torch)
        )


def _widths(graphs: list[DrawnGraph]) -> list[float]:
    return [max(layers(g), default=0) + 1.2 for g in graphs]


def figure_size(graphs: list[DrawnGraph]) -> tuple[float, float]:
    """Inches for the graphs side by side: by their layers across, their fullest layer down."""
    rows = max(max(layers(g).count(k) for k in set(layers(g))) for g in graphs)
    return 1.45 * sum(_widths(graphs)), 0.9 + 0.95 * rows


def fill_figure(figure: Figure, graphs: list[DrawnGraph]) -> Figure:
    """Draw the graphs side by side on ``figure``, each as wide as its layers need."""
    axes = figure.subplots(1, len(graphs), width_ratios=_widths(graphs), squeeze=False)[0]
    for ax, graph in zip(axes, graphs, strict=True):
        draw_graph(graph, ax)
    return figure


def side_by_side(
    fn: Callable[..., Any],
    inputs: Mapping[str, Any],
    *,
    tensor_type: type,
    requires_grad: list[str] | None = None,
) -> SideBySide:
    """``fn`` recorded in the engine and in torch from the same arrays, drawn side by side.

    Each box shows an input (blue) or a result (yellow) with its value and its gradient after
    backward, as micrograd's ``draw_dot`` does; the two drawings should agree number for
    number.
    """
    engine = record_engine(fn, inputs, tensor_type=tensor_type, requires_grad=requires_grad)
    theirs = record_torch(fn, inputs, requires_grad=requires_grad)
    graphs = [engine, theirs]
    figure = Figure(figsize=figure_size(graphs), layout="constrained")
    return SideBySide(engine, theirs, fill_figure(figure, graphs))


def draw_graphs(
    engine_root: Any,
    torch_root: torch.Tensor,
    engine_leaves: Mapping[str, Any],
    torch_leaves: Mapping[str, torch.Tensor],
) -> Figure:
    """Two outputs' graphs side by side, as far as each library keeps values and gradients.

    The drawing of earlier releases of notebook 02 (``draw_graphs(...)`` then ``plt.show()``),
    kept for their restored cells: the figure is pyplot's, so ``plt.show()`` shows it.
    """
    import matplotlib.pyplot as plt

    graphs = [walk_engine(engine_root, engine_leaves), walk_torch(torch_root, torch_leaves)]
    return fill_figure(plt.figure(figsize=figure_size(graphs), layout="constrained"), graphs)
