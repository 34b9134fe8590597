"""Sparse (BM25), dense (FAISS) and hybrid (their fusion) retrievers over a list of passages, with
on-disk index caches.

With a `cache_dir`, `build` stores an index in `cache_dir/<kind>-<key>/`, where the key hashes
everything the index depends on (passage ids in order, settings, and for dense retrieval the
encoder's fingerprint). `meta.json` is written last, so a folder without it is an unfinished build:
a later `build` reloads a finished folder and resumes an unfinished dense one chunk by chunk.
The hybrid retriever keeps no index of its own: its BM25 and dense parts keep theirs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import bm25s
import faiss
import numpy as np
from tqdm.auto import tqdm

import Stemmer

from core.config import require_positive
from core.types import Passage
from models.encoder import Encoder, TextEncoder

log = logging.getLogger(__name__)

Hit = tuple[str, float]
RetrieverKind = Literal["bm25", "dense", "hybrid"]
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
    def build(self, passages: list[Passage], cache_dir: str | os.PathLike | None = None) -> None:
        """Index `passages` (sets `ids`), reusing an index kept under `cache_dir` when there is one."""

    def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        """For each query, up to `k` (passage id, score) pairs, best first."""
        if not self.ids:
            raise RuntimeError("call build() before search()")
        if not queries or k <= 0:
            return [[] for _ in queries]
        return self._search(queries, min(k, len(self.ids)))

    @abstractmethod
    def _search(self, queries: list[str], k: int) -> list[list[Hit]]: ...


class IndexedRetriever(Retriever):
    """A retriever with an index of its own, kept in `cache_dir/<kind>-<key>/` (module docstring)."""

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

    @abstractmethod
    def _build(self, passages: list[Passage], folder: Path | None) -> None: ...

    @abstractmethod
    def _save(self, folder: Path) -> None: ...

    @abstractmethod
    def _load(self, folder: Path) -> None: ...


class BM25Retriever(IndexedRetriever):
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


class DenseRetriever(IndexedRetriever):
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


def reciprocal_rank_fusion(rankings: Sequence[list[Hit]], rrf_k: int, k: int) -> list[Hit]:
    """The `k` best passages of several rankings by reciprocal rank fusion (Cormack et al. 2009): a
    passage scores the sum of 1 / (rrf_k + rank) over the rankings that hold it, ranks counted from 1.
    Equal sums go to the passage met first reading the rankings rank by rank: the better rank, then the
    earlier ranking."""
    fused: dict[str, float] = {}
    for rank in range(max(map(len, rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                pid = ranking[rank][0]
                fused[pid] = fused.get(pid, 0.0) + 1.0 / (rrf_k + rank + 1)
    return sorted(fused.items(), key=lambda hit: -hit[1])[:k]  # stable: ties keep the order met


@dataclass
class HybridConfig:
    """The hybrid retriever: BM25 and dense rankings fused by reciprocal rank."""

    rrf_k: int = 60
    """RRF's constant k in 1 / (k + rank): larger values flatten the gap between high and low ranks"""
    depth: int = 100
    """passages each retriever ranks for the fusion (at least the passages asked for)"""

    def __post_init__(self) -> None:
        require_positive(self, "rrf_k", "depth")


class HybridRetriever(Retriever):
    """BM25 and dense retrieval fused by reciprocal rank (`reciprocal_rank_fusion`; on equal ranks,
    BM25's passage first): both search to `depth` (or k, when more are asked), one query batch each. A
    passage only one of them finds still ranks, by its rank there. The two parts keep their own
    index caches, so a hybrid run reuses the indexes of BM25 and dense runs."""

    kind = "hybrid"

    def __init__(self, sparse: Retriever, dense: Retriever, config: HybridConfig | None = None) -> None:
        super().__init__()
        self.sparse, self.dense, self.config = sparse, dense, config or HybridConfig()

    def build(self, passages: list[Passage], cache_dir: str | os.PathLike | None = None) -> None:
        for part in (self.sparse, self.dense):
            part.build(passages, cache_dir)
        self.ids = list(self.sparse.ids)
        self.loaded_from_cache = self.sparse.loaded_from_cache and self.dense.loaded_from_cache

    def _search(self, queries: list[str], k: int) -> list[list[Hit]]:
        depth = max(self.config.depth, k)
        return [reciprocal_rank_fusion(rankings, self.config.rrf_k, k)
                for rankings in zip(self.sparse.search(queries, depth), self.dense.search(queries, depth), strict=True)]


RETRIEVERS: dict[RetrieverKind, type[Retriever]] = {"bm25": BM25Retriever, "dense": DenseRetriever,
                                                    "hybrid": HybridRetriever}


def make_retriever(kind: RetrieverKind, encoder: TextEncoder | str | None = None, hybrid: HybridConfig | None = None,
                   **kwargs) -> Retriever:
    """Build a retriever by name. "dense" and "hybrid" need `encoder` (an Encoder, or a name for
    `Encoder(...)`); `kwargs` go to the BM25 or the dense retriever (for "hybrid", to its dense part)."""
    if kind not in RETRIEVERS:
        raise ValueError(f"unknown retriever {kind!r}; known: {', '.join(sorted(RETRIEVERS))}")
    if kind == "bm25":
        return BM25Retriever(**kwargs)
    if encoder is None:
        raise ValueError(f"a {kind} retriever needs an encoder")
    dense = DenseRetriever(Encoder(encoder) if isinstance(encoder, str) else encoder, **kwargs)
    return dense if kind == "dense" else HybridRetriever(BM25Retriever(), dense, hybrid)
