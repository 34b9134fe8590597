"""`rag+rerank`: one retrieval of `depth` passages (KiRAG's budget of searches, K0·L), reranked by
fusing each passage's retriever score with the Aligner's score of its text: does KiRAG's gain come
from its chain, or would the Aligner's ranking of the same pool do?

The Aligner scores a passage by the inner product of the query (the question, the Aligner's
first-hop format `aligner_query`) and the passage's "title. text", both embedded by the Aligner's
encoder (passages cut to its passage token limit). Passage embeddings come from an `EmbeddingIndex`,
each computed once per encoder fingerprint and kept on disk. No KG is needed.

Fused score: (1 - weight) · r + weight · a, where r and a are the retriever's and the Aligner's
scores, each min-max normalised over the question's `depth` passages (so that a weight means the
same for BM25's unbounded scores and cosine ones; all-equal scores normalise to 0). Weight 0 is the
retriever's order, weight 1 the Aligner's; equal fused scores keep the retriever's order. The trace
keeps both raw scores of every passage, so a weight can be chosen afterwards without a rerun.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.chains import aligner_query
from core.config import ConfigError, require_positive
from core.types import Passage, Question
from inference.embedding_index import EmbeddingIndex
from inference.methods import Method, Prediction
from inference.retrievers import Retriever, passage_text


def min_max(scores: np.ndarray) -> np.ndarray:
    """`scores` scaled to [0, 1]; all equal: zeros."""
    spread = scores.max() - scores.min() if len(scores) else 0.0
    return (scores - scores.min()) / spread if spread > 0 else np.zeros_like(scores)


def weighted_min_max(components: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Σ weight · min_max(component): scores of one question's passages fused so that a weight means the
    same whatever the scale of its component (BM25's unbounded scores, cosines)."""
    return sum((w * min_max(c) for c, w in zip(components, weights, strict=True)), np.zeros(len(components[0])))


def fuse(retriever_scores: np.ndarray, aligner_scores: np.ndarray, weight: float) -> np.ndarray:
    return weighted_min_max([retriever_scores, aligner_scores], [1 - weight, weight])


class PassageScorer:
    """The Aligner's score of passages' text ("title. text", `passages` by id) against queries: the inner
    product of their embeddings, passage embeddings kept by `index` (its encoder embeds the queries too)."""

    def __init__(self, index: EmbeddingIndex, passages: dict[str, Passage]) -> None:
        self.index, self.passages = index, passages

    def __call__(self, queries: Sequence[str], ids: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """For each query, the scores (float64) of its passages `ids[i]`; new passages are embedded in one batch."""
        if not queries:
            return []
        vectors = self.index.encoder.encode(list(queries), "query", show_progress=False)
        self.index.embed([(pid, passage_text(self.passages[pid])) for row in ids for pid in row])
        return [(self.index.embed([(pid, passage_text(self.passages[pid])) for pid in row]) @ vector).astype(np.float64)
                if row else np.zeros(0) for vector, row in zip(vectors, ids, strict=True)]


@dataclass
class RerankSettings:
    """`rag+rerank`: one retrieval of `depth` passages, ranked by (1 - weight) · retriever score + weight ·
    Aligner score of the passage text, each min-max normalised over the question's passages."""

    depth: int | None = None
    """passages retrieved and reranked (the `retrieved` pool); null: KiRAG's K0·L (`kirag.k0` × `kirag.max_steps`)"""
    weight: float = 0.5
    """the Aligner's share of the fused score: 0 keeps the retriever's order, 1 is the Aligner's"""
    passage_max_length: int = 256
    """the Aligner's token limit of passages ("title. text")"""

    def __post_init__(self) -> None:
        require_positive(self, "depth", "passage_max_length")
        if not 0 <= self.weight <= 1:
            raise ConfigError("weight", f"must be in [0, 1], got {self.weight}")


class PassageRerank(Method):
    """The top `settings.depth` passages of `retriever` (which must be set), reranked by the fused score
    (module docstring) with the Aligner's text scores from `scorer` (whose encoder's passage token limit
    is `settings.passage_max_length`), keeping the top `k`."""

    def __init__(self, retriever: Retriever, scorer: PassageScorer, settings: RerankSettings, k: int = 10) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if settings.depth is None:
            raise ValueError("settings.depth must be set (evaluate.py's default is KiRAG's K0·L)")
        self.retriever, self.scorer, self.settings, self.k = retriever, scorer, settings, k

    def predict(self, questions: list[Question]) -> list[Prediction]:
        start = time.perf_counter()
        queries = [aligner_query(q.question, []) for q in questions]
        hits = self.retriever.search(queries, self.settings.depth)  # BM25 finds nothing for a query without a known term
        texts = self.scorer(queries, [[pid for pid, _ in row] for row in hits])
        predictions = []
        for question, query, aligned, row in zip(questions, queries, texts, hits, strict=True):
            ids = [pid for pid, _ in row]
            retrieved = np.array([score for _, score in row], dtype=np.float64)
            fused = fuse(retrieved, aligned, self.settings.weight)
            order = np.argsort(-fused, kind="stable")[: self.k]
            trace = [{"query": query, "scores": [[pid, round(float(r), 6), round(float(a), 6)]
                                                 for pid, r, a in zip(ids, retrieved, aligned)]}]
            predictions.append(Prediction(question.id, [(ids[i], float(fused[i])) for i in order], retrieval_calls=1,
                                          trace=trace, retrieved=ids))
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        for prediction in predictions:
            prediction.seconds = seconds
        return predictions
