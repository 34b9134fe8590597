"""Embeddings of texts by id (knowledge triples, passages), each computed once and kept on disk.

Triple and passage embeddings do not depend on the query (KiRAG's authors' code recomputes them at
every step). An `EmbeddingIndex` embeds a text the first time it is scored and keeps the vector, in
memory and, with a `cache_dir`, in `cache_dir/<name>-<encoder fingerprint>/`: one `chunk-*.npz`
(ids and vectors) per batch of new texts, written to a temporary name and renamed, so a killed run
leaves only whole chunks and a rerun, or another method on the same texts, reuses them.
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


class EmbeddingIndex:
    """Embeddings of texts by id, for one encoder (texts embedded as `passage`s); `name` names the
    cache folder, so that each kind of text keeps its own."""

    def __init__(self, encoder: TextEncoder, cache_dir: str | os.PathLike | None = None, name: str = "texts") -> None:
        self.encoder = encoder
        self.folder = Path(cache_dir) / f"{name}-{encoder.fingerprint()}" if cache_dir is not None else None
        self.rows: dict[str, int] = {}
        self._data = np.zeros((0, 0), np.float32)  # rows [0, len) are filled; doubles when full
        if self.folder is not None and self.folder.is_dir():
            for path in sorted(self.folder.glob("chunk-*.npz")):
                self._load_chunk(path)

    def _load_chunk(self, path: Path) -> None:
        """Add a saved chunk; an unreadable one is deleted (its texts are embedded again when scored)."""
        try:
            with np.load(path) as chunk:
                ids, vectors = list(chunk["ids"]), chunk["vectors"]
            if vectors.ndim != 2 or len(ids) != len(vectors) or (self.rows and vectors.shape[1] != self._data.shape[1]):
                raise ValueError(f"{len(ids)} ids for vectors of shape {vectors.shape}")
        except Exception as error:
            log.warning("%s: unreadable embedding chunk (%s: %s); deleting it, its texts will be "
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

    def embed(self, items: Sequence[tuple[str, str]]) -> np.ndarray:
        """The embeddings (n, dim) of `items`, (id, text) pairs, embedding (and storing) only the ids never seen."""
        new: dict[str, str] = {}
        for key, text in items:
            if key not in self.rows:
                new.setdefault(key, text)
        if new:
            vectors = self.encoder.encode(list(new.values()), "passage", show_progress=False)
            if self.folder is not None:
                self._save(list(new), vectors)
            self._append(list(new), vectors)
        return self._data[[self.rows[key] for key, _ in items]]


class TripleIndex(EmbeddingIndex):
    """Aligner embeddings of knowledge triples by id, kept in `cache_dir/triples-<fingerprint>/` for the whole KG."""

    def __init__(self, encoder: TextEncoder, cache_dir: str | os.PathLike | None = None) -> None:
        super().__init__(encoder, cache_dir, "triples")

    def vectors(self, triples: Sequence[Triple]) -> np.ndarray:
        """The embeddings of `triples` (n, dim)."""
        return self.embed([(t.id, t.text) for t in triples])
