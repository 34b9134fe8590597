"""Retrieval and answer metrics: per-question scores (what every figure, interval and paired test is
computed from, and what benchmarks commit) and their means.

Recall@k is the fraction of a question's gold passages found in its top k, averaged over
questions that have gold passages (how many do is reported beside it); an empty result counts as 0
(never skipped). torchmetrics' `RetrievalRecall` cannot express that: it only sees the passages it is given, so a gold passage
that was never retrieved would be missing from the denominator. EM/F1 are SQuAD's
(`core.text.answer_scores`: SQuAD normalisation, maximised over the answer and its aliases), as fractions.
`answer_in_context@k` is the share of questions with gold answers whose answer (or an alias) appears,
as whole words after the same normalisation, in the title or text of the top k passages: whether
the reader (which reads the top 3 by default) could have answered, apart from the reader itself.
"""

from __future__ import annotations

import torch
from torchmetrics.aggregation import MeanMetric

from core.text import answer_scores, contains_words
from datamodules.loaders import Benchmark
from evaluation.stats import interval
from inference.methods import Prediction

RECALL_KS = (1, 2, 3, 5, 10)
CONTEXT_KS = (3, 5)
TESTED = ("recall@5", "answer_in_context@3", "em", "f1")  # the figures given an interval and paired tests
RECALLS = tuple(f"recall@{k}" for k in RECALL_KS) + ("recall@retrieved",)
CONTEXTS = tuple(f"answer_in_context@{k}" for k in CONTEXT_KS)
COSTS = {"passages_retrieved": "passages_retrieved", "retrieval_calls": "retrieval_calls",
         "llm_calls": "llm_calls", "seconds": "seconds_per_question", "fallbacks": "constructor_fallbacks",
         "truncated_passages": "truncated_passages"}
"""per-question cost (a `Prediction` field) -> the name of its mean"""


def recall_at_k(ranked_ids: list[str], gold_ids: list[str], k: int) -> float:
    gold = set(gold_ids)
    return len(gold & set(ranked_ids[:k])) / len(gold) if gold else 0.0


def pool(prediction: Prediction) -> list[str]:
    """Every passage a method retrieved for a question (iterative methods see more than they return)."""
    return prediction.retrieved if prediction.retrieved is not None else [pid for pid, _ in prediction.passages]


def question_scores(benchmark: Benchmark, predictions: list[Prediction]) -> dict[str, dict[str, float | None]]:
    """Per question id, every figure the means of `summarize` average: recall@k and recall@retrieved,
    answer_in_context@k, EM/F1 (for an answer), and the costs. A figure that cannot be computed for
    the question is None: recall without gold passages, the others without gold answers. Recall
    counts an empty result as 0."""
    scores = {}
    texts = {passage.id: f"{passage.title} {passage.text}" for passage in benchmark.passages}
    for p, q in zip(predictions, benchmark.questions, strict=True):
        ranked, gold, answers = [pid for pid, _ in p.passages], q.gold_passage_ids, q.answers
        row: dict[str, float | None] = {f"recall@{k}": recall_at_k(ranked, gold, k) if gold else None
                                        for k in RECALL_KS}
        row["recall@retrieved"] = recall_at_k(pool(p), gold, len(pool(p))) if gold else None
        row |= {f"answer_in_context@{k}": float(any(contains_words(texts[pid], a) for pid in ranked[:k]
                                                    for a in answers)) if answers else None for k in CONTEXT_KS}
        if p.answer is not None:
            row |= answer_scores(p.answer, answers) if answers else {"em": None, "f1": None}
        row |= {"passages_retrieved": float(len(pool(p))), "retrieval_calls": float(p.retrieval_calls),
                "llm_calls": float(p.llm_calls), "seconds": float(p.seconds)}
        for name in ("fallbacks", "truncated_passages"):  # the Constructor's and the reader's, where they ran
            if getattr(p, name) is not None:
                row[name] = float(getattr(p, name))
        scores[q.id] = row
    return scores


def mean(values: list[float]) -> float | None:
    """The mean (a torchmetrics `MeanMetric`, which reduces across processes), None without values."""
    if not values:
        return None
    metric = MeanMetric().set_dtype(torch.float64)
    metric.update(torch.tensor(values, dtype=torch.float64))
    return float(metric.compute())


def summarize(scores: dict[str, dict[str, float | None]]) -> dict[str, float | None]:
    """The means of per-question scores, each over the questions where it could be computed (None
    where none could: missing, never 0), the 95% interval of each tested mean (`{name}_low` /
    `{name}_high`), and how many questions there are and how many have gold passages."""
    rows = list(scores.values())
    metrics: dict[str, float | None] = {"questions": len(rows),
                                        "questions_with_gold": sum(r.get("recall@1") is not None for r in rows)}
    for name in RECALLS + CONTEXTS + ("em", "f1") + tuple(COSTS):
        if any(name in r for r in rows):
            values = [r[name] for r in rows if r.get(name) is not None]
            metrics[COSTS.get(name, name)] = mean(values)
            if name in TESTED and values:
                metrics[f"{name}_low"], metrics[f"{name}_high"] = interval(values)
    return metrics


def compute_metrics(benchmark: Benchmark, predictions: list[Prediction]) -> dict[str, float | None]:
    """`summarize` of `question_scores`: recall@k, EM/F1 (for methods that answer) with 95% intervals,
    the recall of every passage retrieved (`recall@retrieved`, against the budget of
    `passages_retrieved`), and the mean calls and seconds per question."""
    return summarize(question_scores(benchmark, predictions))
