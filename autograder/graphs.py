"""The graph check and drawings for notebook cells, from :mod:`autograder.checks.graphs` and
:mod:`autograder.checks.graph_drawing` (also the old import path named by notebook 02)."""

from autograder.checks.graph_drawing import draw_graphs, side_by_side
from autograder.checks.graphs import check_graph_like

__all__ = ["check_graph_like", "draw_graphs", "side_by_side"]
