"""Proving the grader: the demo cohort and its planted bugs, the red team, mutation testing
and the GPU check. The top of the wing below the command line: nothing imports it but
``cli``."""
