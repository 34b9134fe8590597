"""Import HippoRAG's OpenIE output (`{"docs": [{title, text, passage, extracted_triples}]}`) into a `KGStore`."""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path

from core.records import DataError, field, read_json
from core.text import normalize_space
from core.types import Passage, Triple, passage_id
from kg.store import KGStore

log = logging.getLogger(__name__)


def _title_and_text(doc: dict, path: Path, where: str) -> tuple[str, str]:
    """A doc's title and text; older files only have `passage`, which is "title\\ntext"."""
    if "title" in doc or "text" in doc:
        return field(doc, "title", str, path, where), field(doc, "text", str, path, where)
    title, _, text = field(doc, "passage", str, path, where).partition("\n")
    return title, text


def _well_formed(triple) -> bool:
    return isinstance(triple, list) and len(triple) == 3 and all(isinstance(x, str) and x.strip() for x in triple)


def import_openie(path: str | Path, passages: list[Passage], store: KGStore) -> dict:
    """Store each doc's triples under the corpus passage it matches; returns counts.

    A doc matches the passage with its title and text, else the only passage with its title.
    Docs matching no passage are counted and skipped, since an OpenIE file may cover a larger
    corpus; a file matching none at all is the wrong file, a DataError. Malformed triples (not
    three non-empty strings) are counted and skipped, as are repeats within a doc.
    """
    path = Path(path)
    value, _ = read_json(path)
    docs = field(value, "docs", list, path, "top level")
    by_id = {p.id: p for p in passages}
    by_title: dict[str, list[str]] = defaultdict(list)
    for p in passages:
        by_title[p.title].append(p.id)

    counts = dict.fromkeys(("triples_in_file", "malformed", "duplicates", "unmatched_docs", "duplicate_docs"), 0)
    entries: dict[str, tuple[str, list[Triple], int]] = {}
    for i, doc in enumerate(docs):
        where = f"docs[{i}]"
        title, text = _title_and_text(doc, path, where)
        raw = field(doc, "extracted_triples", list, path, where)
        counts["triples_in_file"] += len(raw)
        malformed = sum(not _well_formed(t) for t in raw)
        counts["malformed"] += malformed
        pid = passage_id(title, text)
        if pid not in by_id:
            candidates = by_title.get(normalize_space(title), [])
            if len(candidates) != 1:
                counts["unmatched_docs"] += 1
                continue
            pid = candidates[0]
        if pid in entries:
            counts["duplicate_docs"] += 1
            continue
        sentences = by_id[pid].sentences
        triples = {}
        for t in filter(_well_formed, raw):
            triple = Triple.make(*t, pid, sentences)
            counts["duplicates"] += triple.id in triples
            triples.setdefault(triple.id, triple)
        entries[pid] = (pid, list(triples.values()), malformed)

    if docs and not entries:
        raise DataError(path, None, f"none of its {len(docs)} docs matches a corpus passage (by title and text, or title)")
    if counts["unmatched_docs"]:
        log.warning("%s: %d docs match no corpus passage", path, counts["unmatched_docs"])
    new = [entry for pid, entry in entries.items() if not store.has(pid)]
    store.add_many(new, source="openie")
    return {
        "docs": len(docs),
        "matched": len(entries) + counts["duplicate_docs"],
        **counts,
        "already_stored": len(entries) - len(new),
        "passages_imported": len(new),
        "imported": sum(len(triples) for _, triples, _ in new),
    }
