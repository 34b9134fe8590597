"""A KG archive: a corpus's extracted triples as a compressed, committable copy with its provenance.

Extraction on a CPU takes hours per corpus, so stores that took more than one session are committed
under `data/kg/<corpus>/`:
- `triples.jsonl.gz`: the KG store's log lines (`kg/store.py`) of the archived passages, gzip
  without a timestamp, so that the same triples give the same bytes;
- `provenance.json`: what made them (corpus, LM and backend, prompt fingerprint, decoding settings)
  and one entry per write (date, passages added).

`prepare.py kg --archive data/kg/<corpus>` copies the archive's passages into the store before
extracting (nothing is extracted twice) and writes the store's new passages back after, even when
the extraction is interrupted.
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from core.records import write_atomic
from kg.store import Entry, KGStore, parse_record, record_line

TRIPLES_NAME = "triples.jsonl.gz"
PROVENANCE_NAME = "provenance.json"


def read_archive(folder: str | os.PathLike) -> dict[str, tuple[str, Entry, str]]:
    """Passage id -> (its log line, (id, triples, rejected), source), in archive order; {} when the
    folder has no archive yet. Every line is validated; a malformed one is a `DataError` naming the
    file and the line."""
    path = Path(folder) / TRIPLES_NAME
    if not path.exists():
        return {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, EOFError) as error:
        raise OSError(f"{path}: not a readable gzip archive ({error})") from None
    entries: dict[str, tuple[str, Entry, str]] = {}
    for number, line in enumerate(lines, start=1):
        if line.strip():
            pid, triples, rejected, source = parse_record(line, path, number)
            entries.setdefault(pid, (line, (pid, triples, rejected), source))
    return entries


def restore_archive(folder: str | os.PathLike, store: KGStore) -> int:
    """Copy the archive's passages that `store` lacks into it; returns how many were copied."""
    return restore_entries(read_archive(folder), store)


def restore_entries(entries: dict[str, tuple[str, Entry, str]], store: KGStore) -> int:
    """`restore_archive` for entries already read (`read_archive`)."""
    by_source: dict[str, list[Entry]] = defaultdict(list)
    for pid, (_, entry, source) in entries.items():
        if not store.has(pid):
            by_source[source].append(entry)
    return sum(store.add_many(entries, source) for source, entries in by_source.items())


def save_archive(
    folder: str | os.PathLike, store: KGStore, passage_ids: Iterable[str], settings: dict,
    replaced: Iterable[str] = (),
) -> tuple[int, int]:
    """Add the stored passages among `passage_ids` that the archive lacks, and take the store's entry of
    the `replaced` ones it holds (re-extracted); returns how many were (added, replaced).

    The archive keeps what it holds otherwise; a write replaces the file atomically and appends
    `{date, passages_added, passages_replaced, settings}` to the provenance's history. Nothing is
    written when nothing changed.
    """
    folder = Path(folder)
    entries = read_archive(folder)
    new = [pid for pid in dict.fromkeys(passage_ids) if store.has(pid) and pid not in entries]
    renewed = [pid for pid in dict.fromkeys(replaced) if store.has(pid) and pid in entries]
    if not new and not renewed:
        return 0, 0
    for pid in new + renewed:
        triples, rejected, source = store.get(pid), store.rejected(pid), store.source(pid)
        entries[pid] = (record_line(pid, triples, rejected, source).rstrip("\n"), (pid, triples, rejected), source)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / TRIPLES_NAME, "\n".join(line for line, _, _ in entries.values()) + "\n", compress=True)

    provenance_path = folder / PROVENANCE_NAME
    provenance = json.loads(provenance_path.read_text()) if provenance_path.exists() else {"history": []}
    provenance |= {
        "passages": len(entries),
        "triples": sum(len(entry[1]) for _, entry, _ in entries.values()),
        "sources": dict(Counter(source for _, _, source in entries.values())),
    }
    provenance["history"].append({
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "passages_added": len(new),
        "passages_replaced": len(renewed),
        "settings": settings,
    })
    provenance_path.write_text(json.dumps(provenance, indent=2, ensure_ascii=False) + "\n")
    return len(new), len(renewed)
