"""The kernel's side of grading: what a student's grading kernel imports or runs besides the
checks, mounted in its sandbox with them and never importing the instructor's wing.

Modules: ``wire`` (frames: length-prefixed JSON of exact builtin types and raw byte
segments, never pickle), ``values`` (plain values, arrays by value), ``channel`` (one
connection, calls both ways), ``serve`` (the student kernel's side of trusted verdicts),
``runtime_audit`` (the audit hook behind the runtime record) and ``syscall_filter`` (the
kernel's system-call filter; both are loaded by file by the kernel's launcher).

Programs, each run by its path (``python FILE ...``), standard library only: ``launch_kernel``
(the grading kernel's launcher: limits, filter, audit hook, then ipykernel), ``enter_sandbox``
(outside the sandbox: hides the job's notebooks, joins its cgroup, execs bwrap),
``relay_kernel`` (a forked trusted kernel's stand-in) and ``probe_filter`` (does the filter
load here?). ``environment`` names the variables the grader sets for the launcher.
"""
