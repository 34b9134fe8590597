"""The knowledge graph that KiRAG and chain building read: any corpus passage's triples, from the
store, or extracted and stored on first use."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from core.types import Passage, Triple
from kg.extraction import TripleExtractor
from kg.store import KGStore


class TripleSource(Protocol):
    """What KiRAG's loop and negative mining ask of a knowledge graph."""

    def get_many(self, pids: Iterable[str]) -> dict[str, list[Triple]]:
        """The triples of each passage id (in input order, each id once)."""
        ...


class KnowledgeGraph:
    """The triples of any corpus passage: read from the store, or extracted and stored on first use."""

    def __init__(self, store: KGStore, extractor: TripleExtractor | None, passages_by_id: dict[str, Passage]) -> None:
        self.store = store
        self.extractor = extractor
        self.passages_by_id = passages_by_id

    def get(self, pid: str) -> list[Triple]:
        return self.get_many([pid])[pid]

    def get_many(self, pids: Iterable[str]) -> dict[str, list[Triple]]:
        """Triples per passage id; the missing passages are extracted together, in batches."""
        pids = list(dict.fromkeys(pids))
        missing = self.store.missing(pids)
        if missing:
            if self.extractor is None:
                raise KeyError(f"no stored triples in {self.store.folder} for {len(missing)} passage(s) (first: "
                               f"{missing[:5]}) and no extractor to make them: build the KG with `prepare.py kg`")
            unknown = [pid for pid in missing if pid not in self.passages_by_id]
            if unknown:
                raise KeyError(f"passage id(s) {unknown[:5]} are not in the corpus")
            self.extractor.extract_into(self.store, [self.passages_by_id[p] for p in missing], show_progress=False)
        return {pid: self.store.get(pid) for pid in pids}
