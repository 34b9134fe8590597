"""Reading JSON / JSON Lines files with errors that name the file, the record and the field, and
writing files so that a crash never leaves half of one."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import random
import re
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from filelock import FileLock, Timeout


log = logging.getLogger(__name__)

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # JSON's escape of a UTF-16 surrogate


class DataError(ValueError):
    """Bad input data. The message names the file, the record (or line) and what is wrong."""

    def __init__(self, path: str | Path, where: str | None, what: str):
        super().__init__(f"{path}: {where}: {what}" if where else f"{path}: {what}")


class OutputBusyError(RuntimeError):
    """Another process is writing the same output."""


def read_text(path: str | Path) -> str:
    """A UTF-8 text file, without its byte-order mark if it has one; other bytes are a `DataError`."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, "file does not exist" if not path.exists() else "not a file")
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise DataError(path, f"line {line}", f"not UTF-8 text: byte 0x{data[error.start]:02x} "
                                              f"at offset {error.start}") from None


def checkpoint_file(path: str | Path, what: str = "checkpoint") -> Path:
    """`path`, checked to be a whole torch checkpoint (a zip archive, as `torch.save` writes) before torch
    reads it: torch's own errors for a folder or a file cut short are long, and advise unsafe loading."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{what} '{path}' is a folder, not a checkpoint file (train.py writes "
                                "<default_root_dir>/checkpoints/best.ckpt and last.ckpt)")
    if not path.exists():
        raise FileNotFoundError(f"{what} '{path}' does not exist")
    if not zipfile.is_zipfile(path):
        raise DataError(path, None, "not a checkpoint that train.py wrote, or a truncated one (not a whole torch "
                                    "archive: its end record is missing)")
    return path


def _lone_surrogate(value: Any) -> str | None:
    """The first lone UTF-16 surrogate in a parsed JSON value (JSON's `\\ud800` escapes), or None."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError as error:
        return f"\\u{ord(error.object[error.start]):04x}"


def _check_text(value: Any, path: Path, where: str | None) -> None:
    """Refuse strings that are not text: a lone surrogate cannot be hashed, printed or written as UTF-8.

    `where` names a single record; without it, `value` is a whole document and the error names its
    first bad item.
    """
    surrogate = _lone_surrogate(value)
    if surrogate is None:
        return
    if where is None and isinstance(value, (list, dict)):
        items = enumerate(value) if isinstance(value, list) else value.items()
        key, value = next((key, item) for key, item in items if _lone_surrogate(item))
        where = f"record {key}" if isinstance(key, int) else f"key {key!r}"
    if isinstance(value, dict):
        field_name = next(k for k, v in value.items() if _lone_surrogate({k: v}))
        where = f"{where}, field {field_name!r}" if where else f"field {field_name!r}"
    raise DataError(path, where, f"holds the escape {surrogate}, a lone surrogate that is not text")


def _parse(path: Path) -> tuple[Any, list[str] | None]:
    """A file's JSON value, and for JSON Lines each record's location ("line 4"); None for a document."""
    text = read_text(path)
    if not text.strip():
        raise DataError(path, None, "file is empty")
    check = _SURROGATE_ESCAPE.search(text) is not None  # the only way a lone surrogate gets in
    if path.suffix == ".jsonl":  # JSON Lines by name: one record a line, even when there is one line
        return _parse_lines(path, text.splitlines(), check)
    try:
        value = json.loads(text)
        if check:
            _check_text(value, path, None)
        return value, None
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
    return _parse_lines(path, lines, check)


def _parse_lines(path: Path, lines: list[str], check: bool) -> tuple[list, list[str]]:
    """JSON Lines records and their locations; `check`: look for lone-surrogate escapes."""
    records, wheres = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise DataError(path, where, f"malformed JSON Lines record: {error.msg}") from None
        if check:
            _check_text(records[-1], path, where)
        wheres.append(where)
    return records, wheres


def read_json(path: str | Path) -> tuple[Any, str]:
    """Read a `.json` file holding one JSON value or JSON Lines, or a `.jsonl` file (always JSON Lines).

    Returns the value (a list for JSON Lines) and the unit records are counted in ("record" for
    a JSON document, "line" for JSON Lines), so that errors can point at the right place.
    """
    value, wheres = _parse(Path(path))
    return value, "record" if wheres is None else "line"


def read_records(path: str | Path) -> list[tuple[str, Any]]:
    """Read a list of records, each paired with its location (e.g. "record 3" or "line 4")."""
    value, wheres = _parse(Path(path))
    if isinstance(value, dict):
        return [("record 0", value)]
    if not isinstance(value, list):
        raise DataError(path, None, f"expected a JSON list or JSON Lines, found {type(value).__name__}")
    return list(zip(wheres, value)) if wheres is not None else [(f"record {i}", r) for i, r in enumerate(value)]


def log_records(path: str | Path) -> list[tuple[str, Any]]:
    """The records of an append-only JSON Lines log (chains, predictions, traces), each with its line.

    Read only: a partial last line (a write killed, or one in progress) is left out, never cut off
    (the next writer does that, `append_log`); a malformed line before it is a `DataError`."""
    records = []
    for number, line in enumerate(read_log(path).splitlines(), start=1):
        if line.strip():
            try:
                records.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as error:
                raise DataError(path, f"line {number}", f"malformed JSON: {error.msg}") from None
    return records


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


def _whole(data: bytes) -> int:
    """How many leading bytes of a log are whole records: up to its last newline, and the line after it
    too when that line parses (a record whose newline alone is missing)."""
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        try:
            json.loads(data[complete:])
            return len(data)
        except ValueError:  # JSONDecodeError, or bytes that are not UTF-8
            pass
    return complete


def read_log(path: str | Path) -> bytes:
    """The whole records of an append-only JSON Lines log, read only, ending with a newline.

    A partial last line (a process killed mid-write, or a write in progress) is left out with a
    warning; a last line that parses is a record, newline or not. Nothing is written: `append_log`,
    under the writer's lock, repairs the file.
    """
    path = Path(path)
    if not path.exists():
        return b""
    data = path.read_bytes()
    whole = _whole(data)
    if whole < len(data):
        log.warning("%s: leaving out a partial last line (%d bytes), left by an interrupted write or one in "
                    "progress; the next write removes it", path, len(data) - whole)
    data = data[:whole]
    return data if not data or data.endswith(b"\n") else data + b"\n"


def repair_log(path: str | Path) -> None:
    """Make a log end with a whole line before it is appended to: cut off a partial last line, or end a
    last record that lacks its newline. Only a writer calls it, holding the log's lock."""
    path = Path(path)
    if not path.exists():
        return
    with open(path, "rb+") as f:
        data = f.read()
        whole = _whole(data)
        if whole < len(data):
            log.warning("%s: removing a partial last line (%d bytes) left by an interrupted write", path,
                        len(data) - whole)
            f.truncate(whole)
        elif data and not data.endswith(b"\n"):
            f.write(b"\n")
        else:
            return
        f.flush()
        os.fsync(f.fileno())


@contextmanager
def append_log(path: str | Path) -> Iterator[IO[str]]:
    """Open a JSON Lines log for appending, once `repair_log` has made it end with a whole line. The
    caller holds the log's lock (`exclusive_output`, or the KG store's) and fsyncs what it writes."""
    repair_log(path)
    with open(path, "a", encoding="utf-8") as f:
        yield f


def split_held_out(records: list, fraction: float, seed: int) -> tuple[list, list]:
    """(training, held-out) records, one record per question: a seeded shuffle picks `fraction` of
    them (at least one when `fraction` > 0, never all unless `fraction` is 1), and both keep the input order."""
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    if fraction >= 1:
        n_val = len(records)
    elif fraction > 0:
        n_val = min(len(records) - 1, max(1, round(fraction * len(records))))
    else:
        n_val = 0
    held_out = set(order[:n_val])
    return [r for i, r in enumerate(records) if i not in held_out], [r for i, r in enumerate(records) if i in held_out]


def content_digest(path: str | Path) -> str:
    """sha256 (16 hex digits) of a file's bytes, or of a folder's files: their names relative to it and
    their bytes, in name order, hidden files (locks, caches) left out."""
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file() and not any(
        part.startswith(".") for part in p.relative_to(path).parts)) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        if file != path:
            digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with open(file, "rb") as f:
            while chunk := f.read(1 << 24):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def _prefix_digest(data: bytes) -> str:
    return f"{len(data)}:{hashlib.sha256(data).hexdigest()[:16]}"


def log_digest(path: str | Path) -> str:
    """`<bytes>:<sha256>` (16 hex digits) of the whole records of an append-only log (`read_log`)."""
    return _prefix_digest(read_log(path))


def log_extends(path: str | Path, digest: str) -> bool:
    """Whether a log still starts with the records a `log_digest` digested: later appends keep it, any
    change to what it held does not."""
    length = digest.partition(":")[0]
    data = read_log(path)
    return length.isdigit() and int(length) <= len(data) and _prefix_digest(data[: int(length)]) == digest


def write_atomic(path: str | Path, text: str, compress: bool = False) -> None:
    """Write `path` whole or not at all: a temporary file beside it, synced, then renamed over it.
    `compress`: gzip, with no name or time in its header, so the same text gives the same bytes."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if compress:
                with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as packed:
                    packed.write(text.encode("utf-8"))
            else:
                f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_output(path: str | Path, is_folder: bool) -> Path:
    """`path`, refused in one line when it is a file where a folder is to be written, or the reverse."""
    path = Path(path)
    if is_folder and path.exists() and not path.is_dir():
        raise NotADirectoryError(f"{path} is a file, not a folder: choose another output folder")
    if not is_folder and path.is_dir():
        raise IsADirectoryError(f"{path} is a folder, not a file: choose another output file")
    return path


@contextmanager
def exclusive_output(path: str | Path, is_folder: bool) -> Iterator[Path]:
    """Hold an exclusive lock on an output (a folder, or a file and its sidecars) while writing it.

    The lock is `path/.lock` for a folder and `.<name>.lock` beside a file; a second writer fails at
    once instead of mixing its results in. The operating system releases the lock of a killed process.
    """
    path = check_output(path, is_folder)
    folder = path if is_folder else path.parent
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / ".lock" if is_folder else folder / f".{path.name}.lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise OutputBusyError(f"another run is writing to {path}; wait for it to finish or choose another "
                              "output") from None
    try:
        yield path
    finally:
        lock.release()


def check_settings(record: str | Path, settings: dict[str, Any], output: str | Path, overwrite: bool) -> None:
    """An output is only added to by the settings that made it (saved in `record` beside it).

    Refuses, unless `overwrite`, when `record` holds other settings, or when `output` exists without a
    record. The caller writes `record` (and, with `overwrite`, clears `output`) only once it has checked
    its inputs, so a failing run changes nothing.
    """
    record, output = Path(record), Path(output)
    if overwrite:
        return
    if record.exists():
        try:
            saved = json.loads(read_text(record))
        except json.JSONDecodeError as error:
            raise DataError(record, None, f"malformed settings record ({error.msg}); pass --overwrite true "
                                          "to start over") from None
        if saved != json.loads(json.dumps(settings)):
            changed = sorted(k for k in {*saved, *settings} if saved.get(k) != settings.get(k))
            raise ValueError(f"{output} was made with other settings ({', '.join(changed)} differ; see {record}): "
                             "choose another output or pass --overwrite true")
    elif output.is_file() and output.stat().st_size or output.is_dir() and any(
            not p.name.startswith(".") for p in output.iterdir()):  # a folder's lock file is no content
        raise ValueError(f"{output} exists and was not made by this command (no {record.name}): choose another "
                         "output or pass --overwrite true")
