"""Mutation testing of the graders (``autograd-course mutate``).

Modules: ``operators`` (the classic mistakes, as syntax-tree rewrites), ``mutants`` (each
exercise's mutants, the seeded sample), ``equivalents`` (the hand-kept list of mutants that
cannot change behaviour), ``grading`` (mutants graded as students by autograde, cached),
``report`` (counts, survivors' diffs, HTML, JSON, the score table in docs/grading-design.md)
and ``run`` (the command).
"""
