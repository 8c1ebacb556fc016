"""The reference autograd engine: the solutions' engine, one source of truth.

Each file is split into chunks by ``# %% chunk: NAME`` lines. The solution notebooks
show those chunks as cells (``autograd-course sync-engine`` writes them there and the
test suite fails when a notebook cell drifts from its chunk), so the code students read
in the solutions, the code later notebooks import and the code benchmarks measure are
the same lines. Text before the first chunk marker (imports) stays in the module only.
A part marked ``# %% chunk: NAME from NN`` is what notebook NN adds to chunk NAME, as whole
definitions (a subclass keeping the class's name, or a new function); earlier notebooks
do not show it.
"""
