"""A JSON list of records, one a line, that grows by appending in place: each append writes
only the new records (a course's log holds tens of thousands; rewriting it all for each one
is quadratic), and a reader still gets every complete record from a file whose last append
was cut short (a killed run).

The file reads ``[``, then one record a line, each but the last followed by a comma, then
``]``. An append overwrites the closing ``\\n]\\n`` with ``,\\n`` and the new records and a new
closing, in one write; until it is complete the file is not valid JSON, and ``read_records``
then takes the complete records from its start (the one being written is lost, as it would
have been had the run been killed a moment earlier).
"""

import datetime as dt
import json
import os
from pathlib import Path

CLOSING = b"\n]\n"  # how a file ends when its last append finished


def read_records(path: Path) -> list:
    """The file's records ([] when it does not exist); the complete ones of a torn file.

    ValueError when the file is not a JSON list at all."""
    if not path.exists():
        return []
    text = path.read_text()
    try:
        records = json.loads(text)
    except json.JSONDecodeError:
        records = complete_records(text)
        if records is None:
            raise ValueError(f"{path} is not a JSON list of records") from None
    if not isinstance(records, list):
        raise ValueError(f"{path} is not a JSON list of records")
    return records


def complete_records(text: str) -> list | None:
    """The records that are whole at the start of a JSON list cut short (None: no list)."""
    start = text.lstrip()
    if not start.startswith("["):
        return None
    decoder = json.JSONDecoder()
    records = []
    position = len(text) - len(start) + 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] == "]":
            return records
        try:
            record, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:  # the append that was cut short
            return records
        records.append(record)


def append_records(path: Path, new: list[dict]) -> None:
    """Add ``new`` at the end of the file, writing only them (the whole file once, when it is
    new or was left torn by a killed run)."""
    if not new:
        return
    lines = ",\n".join(json.dumps(record) for record in new)
    try:
        file = path.open("r+b")
    except FileNotFoundError:
        rewrite(path, new)
        return
    with file:
        size = file.seek(0, os.SEEK_END)
        file.seek(max(0, size - len(CLOSING)))
        if size <= len(CLOSING) or file.read() != CLOSING:
            file.close()
            rewrite(path, [*read_records(path), *new])
            return
        # One write from the closing bracket on: ``,`` after the last record, the new ones.
        file.seek(size - len(CLOSING))
        file.write(b",\n" + lines.encode() + CLOSING)


def rewrite(path: Path, records: list) -> None:
    """Write the whole file anew, replacing it atomically (a crash leaves the old one)."""
    body = ",\n".join(json.dumps(record) for record in records)
    # An empty list does not end in CLOSING: the first append after it rewrites it.
    text = b"[\n" + body.encode() + CLOSING if records else b"[]\n"
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(text)
    os.replace(temporary, path)


def utc_now() -> str:
    """Now as ISO 8601 with the UTC offset, the records' time format."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
