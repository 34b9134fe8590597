"""Reading JSON / JSON Lines files with errors that name the file, the record and the field."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any


log = logging.getLogger(__name__)


class DataError(ValueError):
    """Bad input data. The message names the file, the record (or line) and what is wrong."""

    def __init__(self, path: str | Path, where: str | None, what: str):
        super().__init__(f"{path}: {where}: {what}" if where else f"{path}: {what}")


def read_json(path: str | Path) -> tuple[Any, str]:
    """Read a `.json`/`.jsonl` file holding one JSON value or JSON Lines.

    Returns the value (a list for JSON Lines) and the unit records are counted in ("record" for
    a JSON document, "line" for JSON Lines), so that errors can point at the right place.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, "file does not exist" if not path.exists() else "not a file")
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise DataError(path, None, "file is empty")
    try:
        return json.loads(text), "record"
    except json.JSONDecodeError as whole_error:
        lines = text.splitlines()
        first = next(i for i, line in enumerate(lines) if line.strip())
        try:
            json.loads(lines[first])
        except json.JSONDecodeError:
            # Not JSON Lines either: report the error of the document as a whole.
            raise DataError(
                path, f"line {whole_error.lineno} column {whole_error.colno}", f"malformed JSON: {whole_error.msg}"
            ) from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise DataError(path, f"line {number}", f"malformed JSON Lines record: {error.msg}") from None
    return records, "line"


def read_records(path: str | Path) -> list[tuple[str, Any]]:
    """Read a list of records, each paired with its location (e.g. "record 3" or "line 4")."""
    value, unit = read_json(path)
    if isinstance(value, dict):
        value, unit = [value], "record"
    if not isinstance(value, list):
        raise DataError(path, None, f"expected a JSON list or JSON Lines, found {type(value).__name__}")
    if unit == "line":  # number by physical line, skipping blank ones as read_json did
        lines = [i for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1) if line.strip()]
        return [(f"line {n}", r) for n, r in zip(lines, value)]
    return [(f"record {i}", r) for i, r in enumerate(value)]


def field(record: Any, name: str, kind: type | tuple[type, ...], path: str | Path, where: str) -> Any:
    """Return `record[name]`, checking that it exists and has the expected type."""
    if not isinstance(record, dict):
        raise DataError(path, where, f"expected an object with field '{name}', found {type(record).__name__}")
    if name not in record:
        raise DataError(path, where, f"missing field '{name}'")
    value = record[name]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DataError(path, where, f"field '{name}' should be {names}, found {type(value).__name__}")
    return value


def complete_log(path: str | Path) -> bytes:
    """The complete lines of an append-only JSON Lines log, after cutting off a partial last line.

    A process killed mid-write leaves at most one partial line at the end; cutting it off lets the
    next run append cleanly and redo only that record.
    """
    path = Path(path)
    if not path.exists():
        return b""
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        log.warning("%s: dropping a partial last line (%d bytes) left by an interrupted write", path,
                    len(data) - complete)
        with open(path, "rb+") as f:
            f.truncate(complete)
    return data[:complete]


def split_held_out(records: list, fraction: float, seed: int) -> tuple[list, list]:
    """(training, held-out) records, one record per question: a seeded shuffle picks `fraction` of
    them (at least one when `fraction` > 0, never all), and both keep the input order."""
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    n_val = min(len(records) - 1, max(1, round(fraction * len(records)))) if fraction > 0 else 0
    held_out = set(order[:n_val])
    return [r for i, r in enumerate(records) if i not in held_out], [r for i, r in enumerate(records) if i in held_out]
