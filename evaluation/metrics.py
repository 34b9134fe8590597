"""Retrieval and answer metrics, as torchmetrics `Metric`s so they reduce across processes.

Recall@k is the fraction of a question's gold passages found in its top k, averaged over
questions that have gold passages (how many do is reported beside it); an empty result counts as 0
(never skipped). torchmetrics'
`RetrievalRecall` cannot express that: it only sees the passages it is given, so a gold passage
that was never retrieved would be missing from the denominator. EM/F1 are SQuAD's
(`core.text.answer_scores`: SQuAD normalisation, maximised over the answer and its aliases), as fractions.
`answer_in_context@k` is the share of questions with gold answers whose answer (or an alias) appears,
as whole words after the same normalisation, in the title or text of the top k passages: whether
the reader (which reads the top 3 by default) could have answered, apart from the reader itself.
"""

from __future__ import annotations

import torch
from torchmetrics import Metric

from core.text import answer_scores, contains_words
from datamodules.loaders import Benchmark
from evaluation.stats import bootstrap_ci
from inference.methods import Prediction

RECALL_KS = (1, 2, 3, 5, 10)
CONTEXT_KS = (3, 5)


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


TESTED = ("recall@5", "answer_in_context@3", "em", "f1")  # the figures given an interval and paired tests


def pool(prediction: Prediction) -> list[str]:
    """Every passage a method retrieved for a question (iterative methods see more than they return)."""
    return prediction.retrieved if prediction.retrieved is not None else [pid for pid, _ in prediction.passages]


def question_scores(benchmark: Benchmark, predictions: list[Prediction]) -> dict[str, dict[str, float]]:
    """Per question id: recall@k (questions with gold passages) and EM/F1 (answered questions with
    gold answers): what the means of `compute_metrics` average, for intervals and paired tests."""
    scores = {}
    texts = {passage.id: f"{passage.title} {passage.text}" for passage in benchmark.passages}
    for p, q in zip(predictions, benchmark.questions, strict=True):
        row = {}
        ranked = [pid for pid, _ in p.passages]
        if q.gold_passage_ids:
            row |= {f"recall@{k}": recall_at_k(ranked, q.gold_passage_ids, k) for k in RECALL_KS}
            row["recall@retrieved"] = recall_at_k(pool(p), q.gold_passage_ids, len(pool(p)))
        if q.answers:
            row |= {f"answer_in_context@{k}": float(any(contains_words(texts[pid], a) for pid in ranked[:k]
                                                        for a in q.answers)) for k in CONTEXT_KS}
        if p.answer is not None and q.answers:
            row |= answer_scores(p.answer, q.answers)
        scores[q.id] = row
    return scores


def confidence_intervals(scores: dict[str, dict[str, float]]) -> dict[str, float]:
    """`{name}_low` / `{name}_high`: the 95% bootstrap interval of each tested mean."""
    bounds = {}
    for name in TESTED:
        values = [row[name] for row in scores.values() if name in row]
        if values:
            bounds[f"{name}_low"], bounds[f"{name}_high"] = bootstrap_ci(values)
    return bounds


def compute_metrics(benchmark: Benchmark, predictions: list[Prediction]) -> dict[str, float]:
    """Recall@k, EM/F1 (for methods that answer) with 95% intervals, the recall of every passage
    retrieved (`recall@retrieved`, against the budget of `passages_retrieved`), and the mean calls
    and seconds per question."""
    ranked = [[pid for pid, _ in p.passages] for p in predictions]
    gold = [q.gold_passage_ids for q in benchmark.questions]
    metrics: dict[str, float] = {"questions": len(predictions), "questions_with_gold": sum(1 for g in gold if g)}
    for k in RECALL_KS:
        recall = RecallAtK(k)
        recall.update(ranked, gold)
        metrics[f"recall@{k}"] = float(recall.compute())
    answered = [(p.answer, q.answers) for p, q in zip(predictions, benchmark.questions) if p.answer is not None]
    if answered:
        scores = AnswerMetrics()
        scores.update([a for a, _ in answered], [g for _, g in answered])
        metrics.update({k: float(v) for k, v in scores.compute().items()})
    scores = question_scores(benchmark, predictions)
    for name in ["recall@retrieved"] + [f"answer_in_context@{k}" for k in CONTEXT_KS]:
        values = [row[name] for row in scores.values() if name in row]
        if values or name == "recall@retrieved":
            metrics[name] = sum(values) / len(values) if values else 0.0
    metrics |= confidence_intervals(scores)
    n = max(len(predictions), 1)
    metrics["passages_retrieved"] = sum(len(pool(p)) for p in predictions) / n
    constructed = [p.fallbacks for p in predictions if p.fallbacks is not None]
    if constructed:
        metrics["constructor_fallbacks"] = sum(constructed) / len(constructed)
    metrics["retrieval_calls"] = sum(p.retrieval_calls for p in predictions) / n
    metrics["llm_calls"] = sum(p.llm_calls for p in predictions) / n
    metrics["seconds_per_question"] = sum(p.seconds for p in predictions) / n
    return metrics
