"""Old import path of :mod:`autograder.checks.graphs`, named by notebook 02's cells."""

from autograder.checks.graphs import check_graph_like, draw_graphs

__all__ = ["check_graph_like", "draw_graphs"]
