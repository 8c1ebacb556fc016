"""How a check's result looks: a compact HTML block in a Jupyter kernel, plain text elsewhere.

The checks keep their plain-text behaviour everywhere: a match prints one line, a mismatch
raises AssertionError with the full explanation (that message is what nbgrader records and
what feedback shows). Inside a Jupyter kernel they also show the result as HTML: a green
line for a match; for a mismatch, just before the AssertionError, a small block with the
headline, the error figures, a table of expected against got and the hint; the traceback
under it then shows the student's cell and the message, not this package's frames
(``autograder.checks.tracebacks``).

The HTML is self-contained (inline styles, no scripts), written by the templates in
``templates/``, which escape every piece of text. ``silenced()`` turns all of it off,
printing included (used by the progress cell).
"""

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

from autograder.checks.language import tr
from autograder.checks.templating import render
from autograder.checks.tracebacks import VIEW_ATTRIBUTE, install_quiet_tracebacks

# Set while checks must neither print nor display (e.g. the progress cell re-running them).
_SILENCED: contextvars.ContextVar[bool] = contextvars.ContextVar("_SILENCED", default=False)


@dataclass(frozen=True)
class FailureView:
    """The parts of a failed check, for display: the text message stays the reference."""

    title: str  # the message's first line: what differs, where, in which dtype
    facts: tuple[str, ...] = ()  # error figures and explanations, one line each
    columns: tuple[str, ...] = ()  # table header (empty: no table)
    rows: tuple[tuple[str, ...], ...] = ()
    more: str = ""  # e.g. "... and 3 more" under the table
    hints: tuple[str, ...] = ()


def in_kernel() -> bool:
    """True when running in a Jupyter kernel (IPython with a kernel), which can show HTML."""
    try:
        from IPython import get_ipython
    except ImportError:  # IPython is not installed: certainly no kernel
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Inside this block the checks neither print their line nor display HTML."""
    token = _SILENCED.set(True)
    try:
        yield
    finally:
        _SILENCED.reset(token)


def is_silenced() -> bool:
    return _SILENCED.get()


def pass_html(line: str) -> str:
    """The green line for a check that matched."""
    return render("check_pass.html", line=line)


def failure_html(view: FailureView) -> str:
    """The block shown above the AssertionError of a failed check."""
    return render(
        "check_failure.html",
        view=view,
        hint_label=tr("hint"),
        below=tr("the full message is in the AssertionError below"),
    )


def _display(plain: str, rich: str) -> None:
    from IPython.display import display

    display({"text/plain": plain, "text/html": rich}, raw=True)


def report_pass(line: str) -> None:
    """Show a match: a green line in a kernel, the printed line anywhere else."""
    if is_silenced():
        return
    if in_kernel():
        _display(line, pass_html(line))
    else:
        print(line)


def failure(message: str, view: FailureView | None = None) -> AssertionError:
    """The AssertionError to raise for a failed check, shown as HTML first when in a kernel.

    Use as ``raise failure(message, view)``: the error carries exactly ``message``; in a
    kernel the HTML block appears in the cell output just above the traceback.
    """
    error = AssertionError(message)
    if view is None:
        view = view_from_message(message)
    setattr(error, VIEW_ATTRIBUTE, view)
    if in_kernel():
        install_quiet_tracebacks()  # the traceback below the block: the cell, not our code
    if not is_silenced() and in_kernel():
        try:
            _display(message, failure_html(view))
        except Exception:  # showing is a courtesy: the AssertionError must still be raised
            pass
    return error


def view_from_message(message: str) -> FailureView:
    """A view of a plain-text message: its first line, its other lines, its hints."""
    lines = message.splitlines() or [""]
    facts, hints = [], []
    prefixes = tuple(dict.fromkeys((tr("hint"), "hint")))
    for line in lines[1:]:
        text = line.strip()
        prefix = next((p for p in prefixes if text.startswith(p)), None)
        if prefix is not None:
            hints.append(text.removeprefix(prefix).lstrip(":").strip())
        elif text:
            facts.append(text)
    return FailureView(title=lines[0], facts=tuple(facts), hints=tuple(hints))
