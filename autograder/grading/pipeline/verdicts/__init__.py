"""Trusted verdicts: at grading time each graded test cell runs in a second, trusted kernel
that reaches the student's objects only through a narrow channel, so nothing the student's
code does in its own kernel decides a grade.

The student kernel's side of the channel (``wire``, ``values``, ``channel``, ``serve``) and
its system-call filter live in the kernel wing, ``autograder.kernel``. Here: ``proxy`` (``Remote``
proxies on the trusted side), ``lending`` (the copies of the student's kernel that the
reference's parts are lent to, checked from outside), ``copy_traces`` (what a copy left
in the sandbox's writable folders), ``trusted`` (the trusted kernel's
session per test cell), ``cells`` (which cells are tests, the trusted preamble, free names),
``executor`` (nbgrader's Execute with the test cells moved to the trusted kernel) and
``forked_kernels`` (trusted kernels forked from a warm process).
"""
