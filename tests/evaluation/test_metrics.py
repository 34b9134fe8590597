"""Metric values on hand-computed cases."""

import pytest

from core.types import Passage, Question
from datamodules.loaders import Benchmark
from evaluation.metrics import RECALL_KS, compute_metrics, question_scores, recall_at_k
from inference.methods import Prediction


def test_recall_at_k_hand_computed():
    ranked = [["a", "x", "b", "y"], ["x", "y"], [], ["c", "d"]]
    gold = [["a", "b"], ["c", "d"], ["e"], []]  # the last question has no gold: not counted
    questions = [Question(f"q{i}", "?", [], g) for i, g in enumerate(gold)]
    predictions = [Prediction(f"q{i}", [(pid, 1.0) for pid in r]) for i, r in enumerate(ranked)]
    metrics = compute_metrics(Benchmark(questions, []), predictions)
    expected = {1: (1 / 2 + 0 + 0) / 3, 2: (1 / 2 + 0 + 0) / 3, 3: (1 + 0 + 0) / 3}
    for k, value in expected.items():
        assert metrics[f"recall@{k}"] == pytest.approx(value, abs=1e-12)
    assert metrics["questions_with_gold"] == 3


def test_empty_result_counts_as_zero_and_duplicate_gold_counts_once():
    assert recall_at_k([], ["a"], 5) == 0.0
    assert recall_at_k(["a", "b"], ["a", "a", "c"], 2) == 0.5


def test_a_metric_that_cannot_be_computed_is_missing_not_zero():
    questions = [Question("q1", "?", [], []), Question("q2", "?", [], [])]  # no gold passages, no answers
    predictions = [Prediction("q1", [("a", 1.0)], answer="x"), Prediction("q2", [], answer="y")]
    metrics = compute_metrics(Benchmark(questions, [Passage("a", "A", "text")]), predictions)
    assert metrics["questions_with_gold"] == 0
    assert all(metrics[name] is None for name in ("recall@1", "recall@10", "recall@retrieved", "em", "f1",
                                                  "answer_in_context@3"))
    assert "recall@5_low" not in metrics and metrics["passages_retrieved"] == 0.5
    scores = question_scores(Benchmark(questions, [Passage("a", "A", "text")]), predictions)
    assert scores["q1"]["recall@5"] is None and scores["q1"]["em"] is None


def test_a_method_that_does_not_answer_has_no_answer_figures():
    questions = [Question("q1", "?", ["Drusk"], ["a"])]
    metrics = compute_metrics(Benchmark(questions, [Passage("a", "A", "Drusk")]), [Prediction("q1", [("a", 1.0)])])
    assert "em" not in metrics and "f1" not in metrics and metrics["answer_in_context@3"] == 1.0


def test_compute_metrics_by_hand():
    questions = [Question("q1", "?", ["Drusk"], ["a", "b"]), Question("q2", "?", ["Ana Corvel"], ["c"]),
                 Question("q3", "?", [], [])]  # no gold passages, no gold answer: counted in neither mean
    passages = [Passage(pid, title, text) for pid, title, text in [
        ("x", "Druskville", "A town."), ("a", "A", "Nothing here."), ("b", "B", "Nor here."),
        ("y", "Y", "Born in Drusk."), ("c", "Brewery", "It was founded by ANA Corvel.")]]
    predictions = [
        Prediction("q1", [("x", 1.0), ("a", 0.9), ("b", 0.8), ("y", 0.7)], answer="the Drusk", retrieval_calls=2,
                   llm_calls=3, seconds=1.0),
        Prediction("q2", [("c", 1.0)], answer="Ana Corvel, brewer", retrieval_calls=1, seconds=2.0,
                   retrieved=["c", "d", "e", "f", "g", "h", "i"]),  # an iterative method saw more than it returns
        Prediction("q3", [], answer="anything", seconds=3.0),
    ]
    metrics = compute_metrics(Benchmark(questions, passages), predictions)
    assert RECALL_KS == (1, 2, 3, 5, 10)
    assert metrics == pytest.approx({
        "questions": 3, "questions_with_gold": 2,
        "recall@1": (0 + 1) / 2, "recall@2": (0.5 + 1) / 2, "recall@3": 1.0, "recall@5": 1.0, "recall@10": 1.0,
        "em": 0.5, "f1": (1 + 0.8) / 2, "retrieval_calls": 1.0, "llm_calls": 1.0, "seconds_per_question": 2.0,
        "passages_retrieved": (4 + 7 + 0) / 3, "recall@retrieved": 1.0,
        # q1's answer first appears at rank 4 ("Druskville" is not "Drusk"), q2's at rank 1; q3 has none
        "answer_in_context@3": (0 + 1) / 2, "answer_in_context@5": (1 + 1) / 2,
        # 95% bootstrap intervals over the two scored questions: a resample is all q1, all q2 or both
        "recall@5_low": 1.0, "recall@5_high": 1.0, "em_low": 0.0, "em_high": 1.0, "f1_low": 0.8, "f1_high": 1.0,
        "answer_in_context@3_low": 0.0, "answer_in_context@3_high": 1.0,
    })
    # the recall of every passage retrieved, not only of those returned: the budget-matched comparison
    pooled = compute_metrics(Benchmark(questions[:1], passages), [Prediction("q1", [("x", 1.0)], retrieved=["x", "b", "a"])])
    assert pooled["recall@10"] == 0.0 and pooled["recall@retrieved"] == 1.0 and pooled["passages_retrieved"] == 3
    retrieval_only = compute_metrics(Benchmark(questions, passages), [Prediction(q.id, []) for q in questions])
    assert "em" not in retrieval_only and retrieval_only["recall@10"] == 0.0
    assert retrieval_only["answer_in_context@5"] == 0.0
