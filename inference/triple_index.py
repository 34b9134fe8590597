"""Aligner embeddings of knowledge triples, each computed once and kept on disk for the whole KG.

Triple embeddings do not depend on the query (the authors' code recomputes them at every step).
`TripleIndex` embeds a triple the first time it is scored and keeps the vector, in memory and,
with a `cache_dir`, in `cache_dir/triples-<encoder fingerprint>/`: one `chunk-*.npz` (ids and
vectors) per batch of new triples, written to a temporary name and renamed, so a killed run
leaves only whole chunks and a rerun, or another method on the same KG, reuses them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.types import Triple
from models.encoder import TextEncoder

log = logging.getLogger(__name__)


class TripleIndex:
    """Embeddings of triples by id, for one encoder."""

    def __init__(self, encoder: TextEncoder, cache_dir: str | os.PathLike | None = None) -> None:
        self.encoder = encoder
        self.folder = Path(cache_dir) / f"triples-{encoder.fingerprint()}" if cache_dir is not None else None
        self.rows: dict[str, int] = {}
        self._data = np.zeros((0, 0), np.float32)  # rows [0, len) are filled; doubles when full
        if self.folder is not None and self.folder.is_dir():
            for path in sorted(self.folder.glob("chunk-*.npz")):
                self._load_chunk(path)

    def _load_chunk(self, path: Path) -> None:
        """Add a saved chunk; an unreadable one is deleted (its triples are embedded again when scored)."""
        try:
            with np.load(path) as chunk:
                ids, vectors = list(chunk["ids"]), chunk["vectors"]
            if vectors.ndim != 2 or len(ids) != len(vectors) or (self.rows and vectors.shape[1] != self._data.shape[1]):
                raise ValueError(f"{len(ids)} ids for vectors of shape {vectors.shape}")
        except Exception as error:
            log.warning("%s: unreadable triple-embedding chunk (%s: %s); deleting it, its triples will be "
                        "embedded again", path, type(error).__name__, error)
            path.unlink(missing_ok=True)
            return
        self._append(ids, vectors)

    def _append(self, ids: list[str], vectors: np.ndarray) -> None:
        fresh = [(str(tid), i) for i, tid in enumerate(ids) if str(tid) not in self.rows]  # two writers: first wins
        start, need = len(self.rows), len(self.rows) + len(fresh)
        if need > len(self._data):
            grown = np.zeros((max(need, 2 * len(self._data)), vectors.shape[1]), np.float32)
            if start:
                grown[:start] = self._data[:start]
            self._data = grown
        for offset, (tid, i) in enumerate(fresh):
            self.rows[tid] = start + offset
            self._data[start + offset] = vectors[i]

    def _save(self, ids: list[str], vectors: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"chunk-{time.time_ns()}-{os.getpid()}.npz"  # ordered, unique across writers
        tmp = path.with_name("." + path.name)  # outside the chunk-*.npz pattern until renamed
        np.savez(tmp, ids=np.array(ids), vectors=vectors)
        os.replace(tmp, path)

    def vectors(self, triples: Sequence[Triple]) -> np.ndarray:
        """The embeddings of `triples` (n, dim), embedding (and storing) only the ids never seen."""
        new: dict[str, str] = {}
        for t in triples:
            if t.id not in self.rows:
                new.setdefault(t.id, t.text)
        if new:
            vectors = self.encoder.encode(list(new.values()), "passage", show_progress=False)
            if self.folder is not None:
                self._save(list(new), vectors)
            self._append(list(new), vectors)
        return self._data[[self.rows[t.id] for t in triples]]
