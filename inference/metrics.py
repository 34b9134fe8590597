"""Retrieval and answer metrics, as torchmetrics `Metric`s so they reduce across processes.

Recall@k is the fraction of a question's gold passages found in its top k, averaged over
questions that have gold passages; an empty result counts as 0 (never skipped). torchmetrics'
`RetrievalRecall` cannot express that: it only sees the passages it is given, so a gold passage
that was never retrieved would be missing from the denominator. EM/F1 are torchmetrics' SQuAD
metric (SQuAD normalisation, maximised over the answer and its aliases), reported as fractions.
"""

from __future__ import annotations

import torch
from torchmetrics import Metric
from torchmetrics.functional.text import squad


def recall_at_k(ranked_ids: list[str], gold_ids: list[str], k: int) -> float:
    gold = set(gold_ids)
    return len(gold & set(ranked_ids[:k])) / len(gold) if gold else 0.0


class RecallAtK(Metric):
    full_state_update = False

    def __init__(self, k: int, **kwargs):
        super().__init__(**kwargs)
        self.k = k
        self.add_state("total", default=torch.tensor(0.0, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, ranked_ids: list[list[str]], gold_ids: list[list[str]]) -> None:
        for ranked, gold in zip(ranked_ids, gold_ids, strict=True):
            if gold:
                self.total += recall_at_k(ranked, gold, self.k)
                self.count += 1

    def compute(self) -> torch.Tensor:
        return self.total / self.count if self.count > 0 else torch.tensor(0.0, dtype=torch.float64)


def answer_scores(prediction: str, answers: list[str]) -> dict[str, float]:
    """SQuAD exact match and token F1 of one prediction, maximised over the answers, in [0, 1]."""
    if not answers:
        raise ValueError("cannot score an answer without gold answers")
    result = squad(
        preds=[{"prediction_text": prediction, "id": "0"}],
        target=[{"answers": {"answer_start": [0] * len(answers), "text": list(answers)}, "id": "0"}],
    )
    return {"em": float(result["exact_match"]) / 100.0, "f1": float(result["f1"]) / 100.0}


class AnswerMetrics(Metric):
    """Mean EM and F1 over questions that have gold answers."""

    full_state_update = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name in ("em", "f1"):
            self.add_state(name, default=torch.tensor(0.0, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, predictions: list[str], answers: list[list[str]]) -> None:
        for prediction, gold in zip(predictions, answers, strict=True):
            if gold:
                scores = answer_scores(prediction, gold)
                self.em += scores["em"]
                self.f1 += scores["f1"]
                self.count += 1

    def compute(self) -> dict[str, torch.Tensor]:
        n = max(int(self.count), 1)
        return {"em": self.em / n, "f1": self.f1 / n}
