"""Benchmarks of the reference engine, the grading pipeline and memory (``make bench``).

They print tables and write JSON under build/bench/; they measure and never assert on time.
"""
