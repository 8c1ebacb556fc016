"""Old import path of :mod:`autograder.checks.graphs`, named by notebook 02's cells."""

from autograder.checks.graph_drawing import draw_graphs, side_by_side
from autograder.checks.graphs import check_graph_like

__all__ = ["check_graph_like", "draw_graphs", "side_by_side"]
