"""How a check's result looks: a compact HTML block in a Jupyter kernel, plain text elsewhere.

The checks keep their plain-text behaviour everywhere: a match prints one line, a mismatch
raises AssertionError with the full explanation (that message is what nbgrader records and
what feedback shows). Inside a Jupyter kernel they also show the result as HTML: a green
line for a match; for a mismatch, just before the AssertionError, a small block with the
headline, the error figures, a table of expected against got and the hint; the traceback
under it then shows the student's cell and the message, not this package's frames
(``autograder.checks.tracebacks``).

The HTML is self-contained (inline styles, no scripts) and every piece of text in it is
escaped. ``silenced()`` turns all of it off, printing included (used by the progress cell).
"""

import contextlib
import contextvars
import html
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from autograder.checks.language import tr

# Set while checks must neither print nor display (e.g. the progress cell re-running them).
_SILENCED: contextvars.ContextVar[bool] = contextvars.ContextVar("_SILENCED", default=False)

# Attribute under which a failure's structured view rides on its AssertionError.
VIEW_ATTRIBUTE = "_autograder_view"

_PASS_STYLE = (
    "margin:2px 0;padding:2px 8px;border-left:4px solid #1a7f37;background:#dafbe1;"
    "color:#0f5323;font-family:var(--jp-code-font-family,monospace);font-size:12px"
)
_FAIL_STYLE = (
    "margin:2px 0;padding:4px 8px;border-left:4px solid #cf222e;background:#ffebe9;"
    "color:#1f2328;font-size:12px"
)
TABLE_STYLE = (
    "border-collapse:collapse;margin:4px 0;font-family:var(--jp-code-font-family,monospace);"
    "font-size:12px;color:#1f2328"
)
CELL_STYLE = "border:1px solid #d0d7de;padding:1px 6px;text-align:left;background:#ffffff"
HEAD_STYLE = "border:1px solid #d0d7de;padding:1px 6px;text-align:left;background:#f6f8fa"
_MUTED_STYLE = "color:#59636e"


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


def escape(text: object) -> str:
    """HTML-escape any value's text (quotes included)."""
    return html.escape(str(text), quote=True)


def pass_html(line: str) -> str:
    """The green line for a check that matched."""
    return (
        f'<div class="autograder-check autograder-pass" style="{_PASS_STYLE}">'
        f"&#10003; {escape(line)}</div>"
    )


def table_html(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A small bordered table; every cell escaped."""
    head = "".join(f'<th style="{HEAD_STYLE}">{escape(c)}</th>' for c in columns)
    body = "".join(
        "<tr>" + "".join(f'<td style="{CELL_STYLE}">{escape(c)}</td>' for c in row) + "</tr>"
        for row in rows
    )
    return (
        f'<table class="autograder-table" style="{TABLE_STYLE}">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def failure_html(view: FailureView) -> str:
    """The block shown above the AssertionError of a failed check."""
    parts = [
        f'<div class="autograder-check autograder-fail" style="{_FAIL_STYLE}">',
        f'<div style="font-weight:bold;color:#a40e26">&#10007; {escape(view.title)}</div>',
    ]
    parts += [f"<div>{escape(fact)}</div>" for fact in view.facts]
    if view.columns:
        parts.append(table_html(view.columns, view.rows))
    if view.more:
        parts.append(f'<div style="{_MUTED_STYLE}">{escape(view.more)}</div>')
    label = escape(tr("hint"))
    parts += [f'<div class="autograder-hint"><b>{label}:</b> {escape(h)}</div>' for h in view.hints]
    below = escape(tr("the full message is in the AssertionError below"))
    parts.append(f'<div style="{_MUTED_STYLE};font-size:11px">{below}</div></div>')
    return "".join(parts)


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
        from autograder.checks.tracebacks import install_quiet_tracebacks  # needs this module

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
