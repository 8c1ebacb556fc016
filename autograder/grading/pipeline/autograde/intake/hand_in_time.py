"""When a hand-in was made, as nbgrader will read it: its ``timestamp.txt``, vetted first.

nbgrader stops a submission's grading on a timestamp it cannot parse; a missing one it
takes as on time. Here a timestamp that cannot be read is left out of the job (so the
hand-in is graded, as on time) and a note says so; one in the future is kept as written
(it makes the hand-in late) and said once, in the record's note.
"""

import datetime as dt

from nbgrader.utils import parse_utc

TIMESTAMP = "timestamp.txt"
CLOCK_SLACK = dt.timedelta(minutes=5)  # machines' clocks differ a little
LONGEST = 200  # bytes of a timestamp.txt worth reading


def stamp_text(raw: bytes | None) -> str:
    """The start of a timestamp.txt as text ("" for none): never more than ``LONGEST`` bytes."""
    return raw[:LONGEST].decode("utf-8", "replace").strip() if raw is not None else ""


def read_timestamp(raw: bytes | None) -> dt.datetime | None:
    """When a hand-in was made, as nbgrader reads it (naive UTC); None when its timestamp.txt
    is missing, empty, longer than a timestamp can be, or unreadable."""
    text = stamp_text(raw)
    if not text or len(raw) > LONGEST:  # a parser given megabytes stalls
        return None
    try:
        return parse_utc(text)
    except (ValueError, OverflowError, TypeError):
        return None


def vetted(files: dict[str, bytes], now: dt.datetime) -> tuple[dict[str, bytes], str]:
    """(the hand-in's files to grade, a note: "" when its timestamp is readable and past)."""
    raw = files.get(TIMESTAMP)
    text = stamp_text(raw)
    if not text:
        return files, f"no {TIMESTAMP}: graded as on time"
    when = read_timestamp(raw)
    if when is None:
        kept = {name: data for name, data in files.items() if name != TIMESTAMP}
        return kept, f"{TIMESTAMP} {text[:60]!r} cannot be read: graded as on time"
    if when > now.replace(tzinfo=None) + CLOCK_SLACK:
        return files, f"{TIMESTAMP} {text[:60]!r} is in the future: kept as written"
    return files, ""
