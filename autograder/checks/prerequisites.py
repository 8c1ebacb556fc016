"""In the student kit, a check runs the student's own parts of the other exercises it needs.

Where the reference engine is installed (the repository, a grading run) a check of one
exercise borrows the reference's version of the others (``autograder.checks.given``). The
student kit carries no reference, so there the check runs what the student wrote for them,
and says so: when one of those parts still raises NotImplementedError, the check says which
one to write first instead of failing on it; when the check fails otherwise, the failure
gets a note naming the other parts it ran, whose own checks should pass first.

The kit is recognised by what is missing (the ``autograder.engine`` package), not by a flag:
a student who hides the engine gains nothing, because grading lends it from the trusted
kernel, which never comes here.
"""

import importlib.util
import inspect
import sys
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from autograder.checks.display import in_kernel
from autograder.checks.language import tr
from autograder.checks.tracebacks import (
    PREREQUISITE_ATTRIBUTE,
    exception_chain,
    install_quiet_tracebacks,
)

# The package whose presence means "the reference is here to lend".
REFERENCE_PACKAGE = "autograder.engine"


def reference_installed() -> bool:
    """Whether the reference engine can be imported here (not in the student kit)."""
    return importlib.util.find_spec(REFERENCE_PACKAGE) is not None


def part_codes(part: str, namespace: Mapping[str, Any]) -> list[types.CodeType]:
    """The code objects of the notebook's ``part`` (``"function"`` or ``"Class.attribute"``);
    none when its cell has not run or it is not a function there."""
    owner, _, name = part.partition(".")
    found = namespace.get(owner)
    if name:
        if not isinstance(found, type):
            return []
        try:
            found = inspect.getattr_static(found, name)
        except AttributeError:
            return []
    if isinstance(found, property):
        functions = [found.fget, found.fset, found.fdel]
    elif isinstance(found, staticmethod | classmethod):
        functions = [found.__func__]
    else:
        functions = [found]
    return [f.__code__ for f in functions if isinstance(f, types.FunctionType)]


def describe(part: str, exercise: str | None) -> str:
    """``your `Tensor.add_```, with its exercise when the notebook names one."""
    if exercise is None or exercise == part:
        return tr("your `{part}`", part=part)
    return tr("your `{part}` (exercise `{exercise}`)", part=part, exercise=exercise)


def unwritten_parts(error: BaseException, codes: Mapping[types.CodeType, str]) -> list[str]:
    """The parts (of ``codes``) that raised a NotImplementedError in ``error``'s chain: the
    innermost frame of that error's traceback is one of theirs (the answer stub)."""
    found: list[str] = []
    for exc in exception_chain(error):
        tb = exc.__traceback__
        if not isinstance(exc, NotImplementedError) or tb is None:
            continue
        while tb.tb_next is not None:
            tb = tb.tb_next
        part = codes.get(tb.tb_frame.f_code)
        if part is not None and part not in found:
            found.append(part)
    return found


def write_first(message: str) -> NotImplementedError:
    """The error of a check that needs another exercise first, shown in a kernel as a failed
    check is: the cell's line and the message, without the check library's frames."""
    error = NotImplementedError(message)
    setattr(error, PREREQUISITE_ATTRIBUTE, True)
    if in_kernel():
        install_quiet_tracebacks()
    return error


@contextmanager
def own_parts(namespace: Mapping[str, Any], parts: Mapping[str, str | None]) -> Iterator[None]:
    """Run the block with the notebook's own ``parts`` (``part -> exercise``, or None when
    the notebook names no exercises) and explain a failure that comes from one of them."""
    codes = {code: part for part in parts for code in part_codes(part, namespace)}
    ran: dict[str, None] = {}

    def record(frame: types.FrameType, event: str, arg: Any) -> None:
        # Only which parts ran is kept: the note names those, not every part of the notebook.
        if event == "call" and frame.f_code in codes:
            ran.setdefault(codes[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(record)
    try:
        yield
    except Exception as error:
        sys.setprofile(previous)
        unwritten = unwritten_parts(error, codes)
        if unwritten:
            named = ", ".join(describe(part, parts[part]) for part in unwritten)
            # from None: the message names the part; the stub's own traceback is noise here
            raise write_first(
                tr(
                    "this check also runs {parts}, which is not written yet "
                    "(NotImplementedError): write it first, then run this check again",
                    parts=named,
                )
            ) from None
        if ran:
            named = ", ".join(describe(part, parts[part]) for part in ran)
            error.add_note(
                tr(
                    "note: this check also ran {parts} (the student kit has no reference to "
                    "lend for it): if its own check does not pass yet, fix that first",
                    parts=named,
                )
            )
        raise
    finally:
        sys.setprofile(previous)
