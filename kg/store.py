"""A folder of extracted knowledge triples, written incrementally and safe to kill at any moment.

- `triples.jsonl`: the append-only log, the source of truth. One line per finished passage:
  `{"passage_id", "source", "rejected": n, "triples": [{id, head, relation, tail, sentence_index}]}`,
  where `source` is "llm" (the LLM extractor), "openie" (imported OpenIE output) or "manual"
  (hand-written triples, as in the demo KG).
  Each batch is appended, flushed and fsynced, so a crash loses at most the batch being written.
  `replace_many` (a re-extraction) is the one rewrite: the whole log is replaced atomically.
- `.triples.lock`: every write (append, rewrite, snapshot) holds it, so writers in several processes
  (`prepare.py kg`, an `evaluate.py` extracting what it lacks) take turns. A reader takes no lock and
  writes nothing: it reads the whole lines (a last line that parses is one, newline or not) and leaves
  out a partial one, of a write killed or still in progress. The next writer, under the lock, cuts off
  what a killed one left.
- `snapshot/`: a compacted copy of the first `log_bytes` of the log as Parquet (`passages.parquet`,
  `triples.parquet`, then `meta.json` written last). Parsing a large log costs seconds per 100k
  passages; reading the snapshot costs a fraction of one, and only the log lines after it are parsed.
  A snapshot that does not match the log's bytes is ignored. A write rewrites it once the
  unsnapshotted part of the log grows past `AUTO_COMPACT_BYTES`, and so does `compact()`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Dataset
from filelock import FileLock

from core.records import DataError, append_log, read_log, write_atomic
from core.types import Triple, triple_text

log = logging.getLogger(__name__)

LOG_NAME = "triples.jsonl"
LOCK_NAME = ".triples.lock"  # hidden: content digests of the folder leave it out
SNAPSHOT_DIR = "snapshot"
SNAPSHOT_VERSION = 1
AUTO_COMPACT_BYTES = 16 << 20
SOURCES = ("llm", "openie", "manual")  # manual: hand-written triples (the demo KG)
TRIPLE_COLUMNS = tuple(f.name for f in fields(Triple))  # the snapshot's columns, in Triple's order

Entry = tuple[str, list[Triple], int]  # (passage id, its triples, number of rejected outputs)


def _tail_hash(data: bytes) -> str:
    """Fingerprint of the last 4 KiB a snapshot covers, to notice a log that was replaced."""
    return hashlib.sha1(data[-4096:]).hexdigest()


class KGStore:
    """Passage id -> triples, persisted in `folder`. Each passage is stored once: the first write wins,
    unless `replace_many` replaces it."""

    def __init__(self, folder: str | os.PathLike, create: bool = True) -> None:
        """Open the store in `folder`; a folder that does not exist is created, or with `create=False`
        is a `FileNotFoundError` (a mistyped path would otherwise be an empty store)."""
        self.folder = Path(folder)
        if not create and not self.folder.is_dir():
            raise FileNotFoundError(f"KG store {str(folder)!r} does not exist (build it with `prepare.py kg`)")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.log_path = self.folder / LOG_NAME
        self.snapshot_dir = self.folder / SNAPSHOT_DIR
        self._lock = FileLock(self.folder / LOCK_NAME)  # made on the first write: a reader creates no file
        self._load()

    # -- loading ---------------------------------------------------------------------------

    def _load(self) -> None:
        self._info: dict[str, tuple[int, str]] = {}  # passage id -> (rejected, source), in log order
        self._triples: dict[str, list[Triple]] = {}  # passages after the snapshot
        self._table: pa.Table | None = None  # the snapshot's flat triple table
        self._rows: dict[str, tuple[int, int]] = {}  # snapshot passage id -> (first row, row count)
        self.duplicates_on_load = 0
        self._unsnapshotted = 0  # bytes of the log after the snapshot
        data = read_log(self.log_path)
        start = self._load_snapshot(data)
        line_number = data.count(b"\n", 0, start)
        for number, line in enumerate(data[start:].split(b"\n"), start=line_number + 1):
            if line.strip():
                self._load_line(line, number)
        self._unsnapshotted = len(data) - start

    def _load_snapshot(self, log_data: bytes) -> int:
        """Load the snapshot if it matches the log; returns the log offset it covers (0 if none)."""
        meta_path = self.snapshot_dir / "meta.json"
        if not meta_path.exists():
            return 0
        try:
            meta = json.loads(meta_path.read_text())
            covered = meta["log_bytes"]
            if (meta["version"] != SNAPSHOT_VERSION or not 0 < covered <= len(log_data)
                    or meta["log_tail_sha1"] != _tail_hash(log_data[:covered])):
                raise ValueError("it does not match the log")
            passages = pq.read_table(self.snapshot_dir / "passages.parquet").to_pydict()
            table = pq.read_table(self.snapshot_dir / "triples.parquet")
        except (OSError, KeyError, ValueError, pa.ArrowException) as error:
            log.warning("%s: ignoring the snapshot (%s); reading the whole log", self.snapshot_dir, error)
            return 0
        self._table = table
        starts = np.concatenate([[0], np.cumsum(passages["count"])]).tolist()
        for i, (pid, rejected, source, count) in enumerate(
            zip(passages["passage_id"], passages["rejected"], passages["source"], passages["count"])
        ):
            self._info[pid] = (rejected, source)
            self._rows[pid] = (starts[i], count)
        self.duplicates_on_load = meta.get("duplicates_on_load", 0)
        return covered

    def _load_line(self, line: bytes, number: int) -> None:
        pid, triples, rejected, source = parse_record(line, self.log_path, number)
        if pid in self._info:
            self.duplicates_on_load += 1
            return
        self._triples[pid] = triples
        self._info[pid] = (rejected, source)

    # -- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._info)

    def __contains__(self, pid: str) -> bool:
        return pid in self._info

    def has(self, pid: str) -> bool:
        return pid in self._info

    def get(self, pid: str) -> list[Triple]:
        """The triples of a stored passage (KeyError if it is not stored; [] if it has none)."""
        if pid in self._triples:
            return list(self._triples[pid])
        start, count = self._rows[pid]
        return _rows_to_triples(self._table.slice(start, count).to_pydict())

    def rejected(self, pid: str) -> int:
        return self._info[pid][0]

    def source(self, pid: str) -> str:
        return self._info[pid][1]

    def passage_ids(self) -> list[str]:
        return list(self._info)

    def missing(self, passage_ids: Iterable[str]) -> list[str]:
        """The ids not stored yet, in input order, each once."""
        return [pid for pid in dict.fromkeys(passage_ids) if pid not in self._info]

    def triples(self) -> Iterator[Triple]:
        """Every stored triple, passage by passage in the order they were stored."""
        if self._table is not None:
            for batch in self._table.to_batches(max_chunksize=65536):
                yield from _rows_to_triples(batch.to_pydict())
        for triples in self._triples.values():
            yield from triples

    def stats(self) -> dict:
        counts = [n for _, n in self._rows.values()] + [len(t) for t in self._triples.values()]
        return {
            "passages": len(self),
            "triples": sum(counts),
            "rejected": sum(r for r, _ in self._info.values()),
            "passages_without_triples": counts.count(0),
            "by_source": dict(Counter(s for _, s in self._info.values())),
            "duplicates_on_load": self.duplicates_on_load,
        }

    def to_dataset(self) -> Dataset:
        """The flat triple table: id, head, relation, tail, passage_id, sentence_index, text."""
        table = self._flat_table()
        parts = zip(*(table.column(c).to_pylist() for c in ("head", "relation", "tail")))
        text = [triple_text(*p) for p in parts]
        return Dataset(table.append_column("text", pa.array(text, pa.string())))

    # -- writing ---------------------------------------------------------------------------

    def add(self, pid: str, triples: list[Triple], rejected: int = 0, source: str = "llm") -> bool:
        """Store one passage; False (and nothing written) if it is already stored."""
        return self.add_many([(pid, triples, rejected)], source) == 1

    def add_many(self, entries: Iterable[Entry], source: str = "llm") -> int:
        """Append the passages not stored yet in one durable write; returns how many were added."""
        new = {pid: entry for pid, entry in _checked(entries, source).items() if pid not in self._info}
        if not new:
            return 0
        lines = "".join(record_line(pid, triples, rejected, source) for pid, triples, rejected in new.values())
        with self._lock, append_log(self.log_path) as f:
            f.write(lines)
            f.flush()
            os.fsync(f.fileno())
        for pid, triples, rejected in new.values():
            self._triples[pid] = triples
            self._info[pid] = (rejected, source)
        self._unsnapshotted += len(lines.encode("utf-8"))
        if self._unsnapshotted >= AUTO_COMPACT_BYTES:
            try:
                self.compact()
            except OSError as error:
                log.warning("%s: could not write a snapshot (%s)", self.folder, error)
        return len(new)

    def replace_many(self, entries: Iterable[Entry], source: str = "llm") -> int:
        """Store the passages, replacing what is stored for them (a re-extraction); returns how many.

        The log is rewritten with each replaced passage's line in its place and the new ones appended,
        into a temporary file renamed over it, after the snapshot is removed: a crash leaves the old log
        or the new one, never a snapshot of the old one over the new.
        """
        new = _checked(entries, source)
        if not new:
            return 0
        with self._lock:
            lines, placed = [], set()
            for number, line in enumerate(read_log(self.log_path).splitlines(keepends=True), start=1):
                pid = parse_record(line, self.log_path, number)[0] if line.strip() else None
                if pid not in new:
                    lines.append(line.decode("utf-8"))
                elif pid not in placed:  # a later duplicate line of a replaced passage is dropped
                    lines.append(record_line(*new[pid], source))
                    placed.add(pid)
            lines += [record_line(*entry, source) for pid, entry in new.items() if pid not in placed]
            shutil.rmtree(self.snapshot_dir, ignore_errors=True)
            write_atomic(self.log_path, "".join(lines))
            self._load()
        return len(new)

    def compact(self) -> None:
        """Write a Parquet snapshot of everything stored, so that the next open is fast. The store is read
        again first, under the lock: the snapshot then holds what other writers appended too."""
        with self._lock:
            self._load()
            self._compact()

    def _compact(self) -> None:
        log_data = read_log(self.log_path)
        if not log_data:
            return
        table = self._flat_table()
        pids = list(self._info)
        counts = [self._rows[p][1] if p in self._rows else len(self._triples[p]) for p in pids]
        passages = pa.table({
            "passage_id": pa.array(pids, pa.string()),
            "rejected": pa.array([self._info[p][0] for p in pids], pa.int64()),
            "source": pa.array([self._info[p][1] for p in pids], pa.string()),
            "count": pa.array(counts, pa.int64()),
        })
        tmp = self.folder / (SNAPSHOT_DIR + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        pq.write_table(passages, tmp / "passages.parquet")
        pq.write_table(table, tmp / "triples.parquet")
        meta = {"version": SNAPSHOT_VERSION, "log_bytes": len(log_data), "log_tail_sha1": _tail_hash(log_data),
                "passages": len(pids), "triples": len(table), "duplicates_on_load": self.duplicates_on_load}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
        # Swap folders; a crash in between leaves no snapshot (or the old one), never a wrong one.
        shutil.rmtree(self.snapshot_dir, ignore_errors=True)
        os.replace(tmp, self.snapshot_dir)
        self._table, self._triples, self._unsnapshotted = table, {}, 0
        starts = np.concatenate([[0], np.cumsum(counts)]).tolist()
        self._rows = {pid: (starts[i], counts[i]) for i, pid in enumerate(pids)}

    def _flat_table(self) -> pa.Table:
        """The snapshot's rows followed by the rows stored after it (log order)."""
        tail = [t for triples in self._triples.values() for t in triples]
        columns = {c: [getattr(t, c) for t in tail] for c in TRIPLE_COLUMNS}
        schema = pa.schema([(c, pa.int64() if c == "sentence_index" else pa.string()) for c in TRIPLE_COLUMNS])
        tail_table = pa.table(columns, schema=schema)
        return tail_table if self._table is None else pa.concat_tables([self._table.cast(schema), tail_table])


def _checked(entries: Iterable[Entry], source: str) -> dict[str, Entry]:
    """The entries by passage id, the first of each id; a `ValueError` for an unknown source or a
    triple of another passage."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    checked: dict[str, Entry] = {}
    for pid, triples, rejected in entries:
        wrong = [t.id for t in triples if t.passage_id != pid]
        if wrong:
            raise ValueError(f"triples {wrong} do not belong to passage {pid}")
        checked.setdefault(pid, (pid, list(triples), int(rejected)))
    return checked


def _rows_to_triples(rows: dict[str, list]) -> list[Triple]:
    return [Triple(*values) for values in zip(*(rows[c] for c in TRIPLE_COLUMNS))]


def parse_record(line: bytes | str, path: str | os.PathLike, number: int) -> tuple[str, list[Triple], int, str]:
    """One log line -> (passage id, triples, rejected, source); a `DataError` naming `path` and the line if malformed."""
    try:
        record = json.loads(line)
        pid, source, rejected = record["passage_id"], record["source"], record["rejected"]
        triples = [Triple(t["id"], t["head"], t["relation"], t["tail"], pid, t["sentence_index"])
                   for t in record["triples"]]
    except json.JSONDecodeError as error:
        raise DataError(path, f"line {number}", f"malformed JSON: {error.msg}") from None
    except (KeyError, TypeError) as error:
        raise DataError(path, f"line {number}", f"malformed store record ({error!r})") from None
    if source not in SOURCES:
        raise DataError(path, f"line {number}", f"unknown source {source!r} (expected one of {SOURCES})")
    return pid, triples, rejected, source


def record_line(pid: str, triples: list[Triple], rejected: int, source: str) -> str:
    rows = [{"id": t.id, "head": t.head, "relation": t.relation, "tail": t.tail, "sentence_index": t.sentence_index}
            for t in triples]
    record = {"passage_id": pid, "source": source, "rejected": rejected, "triples": rows}
    return json.dumps(record, ensure_ascii=False) + "\n"
