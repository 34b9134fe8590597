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
    truncated_passages: int | None = None  # the reader: passages cut to fit the LM's context

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: dict) -> "Prediction":
        record = dict(record, passages=[tuple(p) for p in record["passages"]])
        return cls(**{k: v for k, v in record.items() if k in cls.__dataclass_fields__})


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

