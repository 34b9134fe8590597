"""Sparse (BM25) and dense (FAISS) retrievers over a list of passages, with on-disk index caches.

With a `cache_dir`, `build` stores the index in `cache_dir/<kind>-<key>/`, where the key hashes
everything the index depends on (passage ids in order, settings, and for dense retrieval the
encoder's fingerprint). `meta.json` is written last, so a folder without it is an unfinished build:
a later `build` reloads a finished folder and resumes an unfinished dense one chunk by chunk.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Literal

import bm25s
import faiss
import numpy as np
from tqdm.auto import tqdm

import Stemmer

from core.types import Passage
from models.encoder import Encoder, TextEncoder

log = logging.getLogger(__name__)

Hit = tuple[str, float]
RetrieverKind = Literal["bm25", "dense"]
CACHE_VERSION = 1


def passage_text(p: Passage) -> str:
    """The text both retrievers index: "title. text".

    The title often names the entity the passage is about (Wikipedia-style corpora), and
    multi-hop questions frequently hinge on that name, so it is searched as part of the text.
    """
    return f"{p.title}. {p.text}" if p.title else p.text


def _hash(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def corpus_fingerprint(passages: list[Passage]) -> str:
    """Hash of the passage ids in order; ids hash title and text, so this covers the content."""
    return _hash("\n".join(p.id for p in passages))


class Retriever(ABC):
    """Base class: `build` once over a corpus, then `search` many times."""

    kind: str

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.loaded_from_cache = False

    @abstractmethod
    def settings(self) -> dict:
        """Everything besides the corpus that the index depends on."""

    def build(self, passages: list[Passage], cache_dir: str | os.PathLike | None = None) -> None:
        if not passages:
            raise ValueError(f"cannot build a {self.kind} retriever: the corpus is empty")
        self.ids = [p.id for p in passages]
        self.loaded_from_cache = False
        if cache_dir is None:
            self._build(passages, None)
            return
        meta = {
            "version": CACHE_VERSION,
            "kind": self.kind,
            "corpus": corpus_fingerprint(passages),
            "num_passages": len(passages),
            **self.settings(),
        }
        folder = Path(cache_dir) / f"{self.kind}-{_hash(json.dumps(meta, sort_keys=True))}"
        meta_path = folder / "meta.json"
        if self._load_cached(folder, meta):
            return
        folder.mkdir(parents=True, exist_ok=True)
        self._build(passages, folder)
        self._save(folder)
        tmp = meta_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=2, sort_keys=True))
        os.replace(tmp, meta_path)

    def _load_cached(self, folder: Path, meta: dict) -> bool:
        """Load a finished index from `folder`; a missing, unfinished or unreadable one is rebuilt (False)."""
        try:
            if json.loads((folder / "meta.json").read_text()) != meta:
                return False
            self._load(folder)
        except FileNotFoundError:
            return False
        except Exception as error:  # a corrupt cache costs a rebuild, never the run
            log.warning("%s: the cached %s index is unreadable (%s: %s); rebuilding it", folder, self.kind,
                        type(error).__name__, error)
            return False
        self.loaded_from_cache = True
        log.info("loaded %s index from %s", self.kind, folder)
        return True

    def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        """For each query, up to `k` (passage id, score) pairs, best first."""
        if not self.ids:
            raise RuntimeError("call build() before search()")
        if not queries or k <= 0:
            return [[] for _ in queries]
        return self._search(queries, min(k, len(self.ids)))

    @abstractmethod
    def _build(self, passages: list[Passage], folder: Path | None) -> None: ...

    @abstractmethod
    def _save(self, folder: Path) -> None: ...

    @abstractmethod
    def _load(self, folder: Path) -> None: ...

    @abstractmethod
    def _search(self, queries: list[str], k: int) -> list[list[Hit]]: ...


class BM25Retriever(Retriever):
    """BM25 (bm25s) with Lucene's English stopwords and Snowball stemming (PyStemmer).

    Only passages sharing at least one term with the query are returned, as in Lucene.
    """

    kind = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene") -> None:
        super().__init__()
        self.k1, self.b, self.method = k1, b, method
        self.stemmer = Stemmer.Stemmer("english")
        self.index: bm25s.BM25 | None = None

    def settings(self) -> dict:
        return {"k1": self.k1, "b": self.b, "method": self.method, "stopwords": "en", "stemmer": "english"}

    def _tokenize(self, texts: list[str], return_ids: bool):
        return bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, return_ids=return_ids, show_progress=False)

    def _build(self, passages: list[Passage], folder: Path | None) -> None:
        self.index = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        self.index.index(self._tokenize([passage_text(p) for p in passages], True), show_progress=False)

    def _save(self, folder: Path) -> None:
        self.index.save(str(folder), show_progress=False)

    def _load(self, folder: Path) -> None:
        self.index = bm25s.BM25.load(str(folder), show_progress=False)

    def _search(self, queries: list[str], k: int) -> list[list[Hit]]:
        docs, scores = self.index.retrieve(self._tokenize(queries, False), k=k, show_progress=False)
        return [
            [(self.ids[d], float(s)) for d, s in zip(row_docs, row_scores) if s > 0]
            for row_docs, row_scores in zip(docs, scores)
        ]


class DenseRetriever(Retriever):
    """Inner-product search over encoder embeddings with FAISS (exact `flat` or approximate `hnsw`).

    Passages are encoded in chunks of `chunk_size`; with a cache folder each finished chunk is
    saved as `.npy` so that an interrupted build resumes where it stopped. The chunk files are
    deleted once the index is saved, since the index holds the same vectors.
    `device="auto"` searches on a GPU when faiss has GPU support and one is visible; HNSW has
    no faiss GPU implementation and always stays on the CPU.
    """

    kind = "dense"

    def __init__(
        self,
        encoder: TextEncoder,
        index: Literal["flat", "hnsw"] = "flat",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
        device: Literal["auto", "cpu", "cuda"] = "auto",
        chunk_size: int = 4096,
    ) -> None:
        super().__init__()
        if index not in ("flat", "hnsw"):
            raise ValueError(f"index must be 'flat' or 'hnsw', got {index!r}")
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
        if device == "cuda" and index == "hnsw":
            raise ValueError("faiss has no GPU HNSW index: use index='flat' or device='cpu'")
        self.encoder = encoder
        self.index_type = index
        self.hnsw_m, self.ef_construction, self.ef_search = hnsw_m, ef_construction, ef_search
        self.device = device
        self.chunk_size = chunk_size
        self.index: faiss.Index | None = None
        self._cpu_index: faiss.Index | None = None
        self._gpu_resources = None  # must outlive the GPU index

    def settings(self) -> dict:
        params = {"hnsw_m": self.hnsw_m, "ef_construction": self.ef_construction} if self.index_type == "hnsw" else {}
        return {"encoder": self.encoder.fingerprint(), "index": self.index_type, "params": params}

    def _embed(self, texts: list[str], folder: Path | None) -> np.ndarray:
        chunks = []
        with tqdm(total=len(texts), desc="embed corpus", unit="passage") as bar:
            for start in range(0, len(texts), self.chunk_size):
                end = min(start + self.chunk_size, len(texts))
                path = folder / f"chunk-{start:010d}-{end:010d}.npy" if folder else None
                emb = self._saved_chunk(path, end - start)
                if emb is None:
                    emb = self.encoder.encode(texts[start:end], "passage")
                    if path is not None:
                        tmp = path.with_name(path.stem + ".tmp.npy")
                        np.save(tmp, emb)
                        os.replace(tmp, path)
                chunks.append(emb)
                bar.update(end - start)
        return np.concatenate(chunks)

    def _saved_chunk(self, path: Path | None, rows: int) -> np.ndarray | None:
        """The embeddings a resumed build saved for this chunk, or None (an unreadable file is redone)."""
        if path is None or not path.exists():
            return None
        try:
            emb = np.load(path)
            if emb.shape[0] != rows:
                raise ValueError(f"{emb.shape[0]} rows, expected {rows}")
            return emb
        except Exception as error:
            log.warning("%s: unreadable embedding chunk (%s: %s); embedding it again", path, type(error).__name__, error)
            return None

    def _build(self, passages: list[Passage], folder: Path | None) -> None:
        emb = self._embed([passage_text(p) for p in passages], folder)
        if self.index_type == "hnsw":
            index = faiss.IndexHNSWFlat(emb.shape[1], self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = self.ef_construction
        else:
            index = faiss.IndexFlatIP(emb.shape[1])
        index.add(emb)
        self._use(index)

    def _save(self, folder: Path) -> None:
        tmp = folder / "index.faiss.tmp"
        faiss.write_index(self._cpu_index, str(tmp))
        os.replace(tmp, folder / "index.faiss")
        for chunk in folder.glob("chunk-*.npy"):
            chunk.unlink()

    def _load(self, folder: Path) -> None:
        self._use(faiss.read_index(str(folder / "index.faiss")))

    def _use(self, index: faiss.Index) -> None:
        """Set search parameters and place the index on the GPU when asked and possible."""
        self._cpu_index = index
        if self.index_type == "hnsw":
            index.hnsw.efSearch = self.ef_search
        self.index = index
        if self._wants_gpu():
            self._gpu_resources = faiss.StandardGpuResources()
            self.index = faiss.index_cpu_to_gpu(self._gpu_resources, 0, index)

    def _wants_gpu(self) -> bool:
        gpus = faiss.get_num_gpus() if hasattr(faiss, "StandardGpuResources") else 0
        if self.device == "cuda" and gpus == 0:
            raise RuntimeError("device='cuda' needs faiss with GPU support (faiss-gpu) and a visible GPU")
        return self.device == "cuda" or (self.device == "auto" and gpus > 0 and self.index_type == "flat")

    def _search(self, queries: list[str], k: int) -> list[list[Hit]]:
        q = self.encoder.encode(queries, "query", show_progress=False)
        scores, idx = self.index.search(q, k)
        return [
            [(self.ids[i], float(s)) for i, s in zip(row_idx, row_scores) if i >= 0]
            for row_idx, row_scores in zip(idx, scores)
        ]


RETRIEVERS: dict[RetrieverKind, type[Retriever]] = {"bm25": BM25Retriever, "dense": DenseRetriever}


def make_retriever(kind: RetrieverKind, encoder: TextEncoder | str | None = None, **kwargs) -> Retriever:
    """Build a retriever by name; for "dense", `encoder` is an Encoder or a name for `Encoder(...)`."""
    if kind not in RETRIEVERS:
        raise ValueError(f"unknown retriever {kind!r}; known: {', '.join(sorted(RETRIEVERS))}")
    if kind == "bm25":
        return BM25Retriever(**kwargs)
    if encoder is None:
        raise ValueError("a dense retriever needs an encoder")
    return DenseRetriever(Encoder(encoder) if isinstance(encoder, str) else encoder, **kwargs)
