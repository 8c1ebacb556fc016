"""In a Jupyter kernel, a failed check's traceback shows the student's cell, not ours.

A failed check raises AssertionError (or, in the student kit, a NotImplementedError naming
an exercise to write first) from deep inside this package; IPython's traceback
would quote the check library's own source (``compare.py`` and friends) under the red
failure block, about 25 lines of noise. IPython hides frames that set
``__tracebackhide__`` except the last one, which is always ours. So, the first time a
check fails in a kernel, an IPython handler for those two is installed: for a check's
failure it drops this package's frames and lets IPython show what is left (the cell line
that called the check, then the message); every other exception is shown exactly as
IPython would. The error output keeps its name and message, which is what nbgrader
records. A handler installed by someone else is never replaced.
"""

from collections.abc import Iterator
from types import TracebackType
from typing import Any

_PACKAGE = "autograder.checks"
# Shell attribute remembering the handler we installed, to recognise it later.
_INSTALLED = "_autograder_quiet_tracebacks"
# Attribute under which a failure's structured view rides on its AssertionError (set by
# autograder.checks.display, read here to tell a check's failure from any other error).
VIEW_ATTRIBUTE = "_autograder_view"
# Marks the NotImplementedError of a check that needs another exercise written first.
PREREQUISITE_ATTRIBUTE = "_autograder_prerequisite"


def is_check_failure(value: BaseException) -> bool:
    """True for the AssertionError of a failed check (it carries the failure's view), and
    for a check's NotImplementedError asking for another exercise first."""
    if isinstance(value, NotImplementedError):
        return getattr(value, PREREQUISITE_ATTRIBUTE, False) is True
    return isinstance(value, AssertionError) and hasattr(value, VIEW_ATTRIBUTE)


def _is_ours(tb: TracebackType) -> bool:
    name = tb.tb_frame.f_globals.get("__name__", "")
    # contextlib: a check's with-block (given.reference_methods) raises through its frames
    return isinstance(name, str) and (
        name in (_PACKAGE, "contextlib") or name.startswith(_PACKAGE + ".")
    )


def without_check_frames(tb: TracebackType | None) -> TracebackType | None:
    """The same traceback chain with this package's frames left out (relinked in place)."""
    kept: list[TracebackType] = []
    while tb is not None:
        if not _is_ours(tb):
            kept.append(tb)
        tb = tb.tb_next
    for earlier, later in zip(kept, kept[1:], strict=False):
        earlier.tb_next = later
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def exception_chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and every exception it was raised from or during, each once (a chain can
    loop back on itself)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        pending += [exc.__cause__, exc.__context__]


def _strip_chain(value: BaseException) -> None:
    """Drop our frames from ``value`` and the exceptions it was raised from."""
    for exc in exception_chain(value):
        exc.__traceback__ = without_check_frames(exc.__traceback__)


def show_quietly(
    shell: Any,
    etype: type[BaseException],
    value: BaseException,
    tb: TracebackType | None,
    tb_offset: int | None = None,
) -> list[str]:
    """IPython custom exception handler: a check's failure without our frames."""
    if is_check_failure(value):
        _strip_chain(value)
        tb = without_check_frames(tb)
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    return []  # already shown


def install_quiet_tracebacks() -> bool:
    """Install ``show_quietly`` in the running kernel; True when it is (now) installed."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    if shell.custom_exceptions:  # a handler is installed already: ours, or never replaced
        return getattr(shell, _INSTALLED, None) is shell.CustomTB
    shell.set_custom_exc((AssertionError, NotImplementedError), show_quietly)
    setattr(shell, _INSTALLED, shell.CustomTB)
    return True
