"""The kernel's side of grading: what a student's grading kernel imports or runs besides the
checks, mounted in its sandbox with them and never importing the instructor's wing.

Modules: ``wire`` (frames: length-prefixed JSON of exact builtin types and raw byte
segments, never pickle), ``values`` (plain values, arrays by value), ``channel`` (one
connection, calls both ways), ``serve`` (the student kernel's side of trusted verdicts),
``runtime_audit`` (the audit hook behind the runtime record) and ``syscall_filter`` (the
kernel's system-call filter; both are loaded by file by the kernel's launcher).
"""
