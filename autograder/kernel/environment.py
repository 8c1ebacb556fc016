"""The environment variables through which the grader tells a kernel's launcher what to put
in the kernel: set on the grading side, read and removed by the launcher.

One module for both sides, plain constants and no imports: the launcher loads this file by
its path (the kernel imports nothing of the grader before its first cell).
"""

# The runtime record's audit hook: the path of ``runtime_audit.py``, loaded by its file.
AUDIT_HOOK_ENV = "AUTOGRADER_AUDIT_HOOK"
# Where the audit hook writes the runtime record (a file in the job folder).
RECORD_ENV = "AUTOGRADER_AUDIT_RECORD"
# The system-call filter: the path of ``syscall_filter.py``, loaded by its file.
SYSCALL_FILTER_ENV = "AUTOGRADER_SYSCALL_FILTER"
# Top-level packages the kernel must not import, comma-separated: an unsandboxed kernel's
# best effort at having no autograd library (the sandbox mounts none).
NO_IMPORT_ENV = "AUTOGRADER_NO_IMPORT"
