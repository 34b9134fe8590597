"""The retrieval methods that `evaluate.py` compares, behind one interface."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass

from core.types import Question
from inference.retrievers import Retriever


@dataclass
class Prediction:
    question_id: str
    passages: list[tuple[str, float]]  # (passage id, score), best first
    answer: str | None = None
    retrieval_calls: int = 0
    llm_calls: int = 0
    seconds: float = 0.0
    chain: list[str] | None = None  # KiRAG: the reasoning chain built, as triple texts
    trace: list[dict] | None = None  # iterative methods: what each step queried, saw and chose
    retrieved: list[str] | None = None  # every distinct passage retrieved, in order; None: those returned
    fallbacks: int | None = None  # KiRAG with a Constructor: steps where its output named no candidate
    passage_scores: list | None = None  # KiRAG: each retrieved passage's ranking components (inference/kirag_ranking.py)
    truncated_passages: int | None = None  # the reader: passages cut to fit the LM's context

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: dict) -> "Prediction":
        record = dict(record, passages=[tuple(p) for p in record["passages"]])
        return cls(**{k: v for k, v in record.items() if k in cls.__dataclass_fields__})


def check_budget(budget: int | None) -> None:
    if budget is not None and budget < 1:
        raise ValueError(f"budget must be at least 1 (or None: no cap), got {budget}")


class PassagePool:
    """The distinct passages a method retrieves, in the order met, each with the score it was met
    with, up to `budget` of them (None: no cap): a budget-controlled method keeps no more."""

    def __init__(self, budget: int | None = None) -> None:
        check_budget(budget)
        self.budget = budget
        self.scores: dict[str, float] = {}

    @property
    def full(self) -> bool:
        return self.budget is not None and len(self.scores) >= self.budget

    def add(self, pid: str, score: float) -> bool:
        """Keep `pid` unless it is already kept or the pool is full; whether it was added."""
        if pid in self.scores or self.full:
            return False
        self.scores[pid] = score
        return True

    def ids(self) -> list[str]:
        return list(self.scores)


class Method(ABC):
    """Answers a batch of questions with ranked passages (and, for some methods, an answer)."""

    answers = False  # whether predictions carry an answer to score with EM/F1
    batched = True  # False: questions are answered one at a time, so evaluate.py saves each as it is done

    @abstractmethod
    def predict(self, questions: list[Question]) -> list[Prediction]: ...


class SingleShotRAG(Method):
    """One retrieval with the question as the query: the baseline every other method is measured against."""

    def __init__(self, retriever: Retriever, k: int = 10):
        self.retriever, self.k = retriever, k

    def predict(self, questions: list[Question]) -> list[Prediction]:
        start = time.perf_counter()
        results = self.retriever.search([q.question for q in questions], self.k)
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        return [Prediction(q.id, ranked, retrieval_calls=1, seconds=seconds) for q, ranked in zip(questions, results)]

