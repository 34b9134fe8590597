"""`mdr`: multi-hop dense retrieval without an LLM, in the style of MDR (Xiong et al. 2021), batched over questions.

1. Hop 1: search the question; keep the top `beam` passages p1 with their scores s1.
2. Hop 2: for each p1, search the question followed by p1's "title. text" (MDR's query is the
   question and the passage before it); keep the top `beam` passages p2 other than p1, scores s2.
3. Paths (p1, p2) score s1 + s2, the sum of the two inner products (MDR's beam score), and are
   walked best first (equal scores: the better hop-1 rank, then the better hop-2 rank), emitting p1
   then p2; a passage already emitted is passed over. A passage scores the path that emitted it.

Choices:
- The encoder is the dense retriever's own, untrained for hop 2 (MDR trains its query encoder on
  question + passage). The query is cut to the encoder's query token limit, so a long p1 may lose
  its end. The baseline therefore measures what the query expansion alone buys over one search.
- Budget: the emitted list stops at `budget` distinct passages; they are the prediction's
  `retrieved` pool and its ranking. The searches score more candidates (up to beam + beam² hits)
  than the budget keeps: the ones not emitted are never returned, read or ranked, so `mdr` at a
  budget of B passages is compared with KiRAG and `rag` at B passages.
- `retrieval_calls` is 1 + the hop-2 searches made (beam when the corpus is large enough), though
  the hop-2 queries of all questions go to the retriever as one batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from core.config import require_positive
from core.types import Passage, Question
from inference.methods import Method, PassagePool, Prediction
from inference.retrievers import Hit, Retriever, passage_text


def hop2_query(question: str, passage: Passage) -> str:
    return f"{question} {passage_text(passage)}"


def merge_paths(paths: list[tuple[str, str, float]], budget: int | None) -> PassagePool:
    """The passages of (p1, p2, score) paths, best path first (a stable sort: equal scores keep the
    paths' order), p1 before p2, each once, up to `budget`."""
    pool = PassagePool(budget)
    for p1, p2, score in sorted(paths, key=lambda path: -path[2]):
        for pid in (p1, p2):
            pool.add(pid, score)
        if pool.full:
            break
    return pool


@dataclass
class MDRSettings:
    """MDR's beam and budget (no LLM; paths scored s1 + s2)."""

    beam: int = 5
    """hop-1 passages expanded, and hop-2 passages kept per expansion (1 + beam searches)"""
    budget: int | None = None
    """the most distinct passages retrieved (the `retrieved` pool, and the ranking); null: every passage
    of the beam² paths"""

    def __post_init__(self) -> None:
        require_positive(self, "beam", "budget")


class MDR(Method):
    """Two-hop dense retrieval over `retriever` (meant to be dense: path scores add its scores) and
    the corpus `passages` with `settings`, keeping the top `k`; see the module docstring."""

    def __init__(self, retriever: Retriever, passages: dict[str, Passage], settings: MDRSettings | None = None,
                 k: int = 10) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.retriever, self.passages = retriever, passages
        self.settings, self.k = settings or MDRSettings(), k

    def predict(self, questions: list[Question]) -> list[Prediction]:
        start = time.perf_counter()
        first = self.retriever.search([q.question for q in questions], self.settings.beam)
        expanded = [(q, pid) for q, row in zip(questions, first, strict=True) for pid, _ in row]
        second = iter(self.retriever.search([hop2_query(q.question, self.passages[pid]) for q, pid in expanded],
                                            self.settings.beam + 1))  # one more: p1 itself is usually found again
        predictions = []
        for question, row in zip(questions, first, strict=True):
            paths = []
            for p1, s1 in row:
                hops: list[Hit] = [(p2, s2) for p2, s2 in next(second) if p2 != p1][: self.settings.beam]
                paths += [(p1, p2, s1 + s2) for p2, s2 in hops]
            pool = merge_paths(paths, self.settings.budget)
            trace = [{"hop1": [[pid, round(s, 6)] for pid, s in row],
                      "paths": [[p1, p2, round(s, 6)] for p1, p2, s in paths]}]
            predictions.append(Prediction(question.id, list(pool.scores.items())[: self.k],
                                          retrieval_calls=1 + len(row), trace=trace, retrieved=pool.ids()))
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        for prediction in predictions:
            prediction.seconds = seconds
        return predictions
