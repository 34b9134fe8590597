"""Metric values on hand-computed cases."""

import pytest

from inference.metrics import AnswerMetrics, RecallAtK, answer_scores, recall_at_k


def test_recall_at_k_hand_computed():
    ranked = [["a", "x", "b", "y"], ["x", "y"], [], ["c", "d"]]
    gold = [["a", "b"], ["c", "d"], ["e"], []]  # the last question has no gold: not counted
    expected = {1: (1 / 2 + 0 + 0) / 3, 2: (1 / 2 + 0 + 0) / 3, 3: (1 + 0 + 0) / 3}
    for k, value in expected.items():
        metric = RecallAtK(k)
        metric.update(ranked, gold)
        assert metric.compute().item() == pytest.approx(value, abs=1e-12)


def test_empty_result_counts_as_zero_and_duplicate_gold_counts_once():
    assert recall_at_k([], ["a"], 5) == 0.0
    assert recall_at_k(["a", "b"], ["a", "a", "c"], 2) == 0.5


def test_recall_accumulates_over_updates():
    metric = RecallAtK(2)
    metric.update([["a", "b"]], [["a", "c"]])
    metric.update([["c"]], [["c"]])
    assert metric.compute().item() == pytest.approx(0.75)


def test_answer_scores_use_squad_normalisation_and_max_over_aliases():
    # "The Drusk!" normalises to "drusk": exact match with the alias.
    assert answer_scores("The Drusk!", ["Vell", "drusk"]) == {"em": 1.0, "f1": 1.0}
    # prediction tokens {ana, corvel, brewer} vs gold {ana, corvel}: P=2/3, R=1, F1=0.8
    scores = answer_scores("Ana Corvel, brewer", ["Ana Corvel"])
    assert scores["em"] == 0.0 and scores["f1"] == pytest.approx(0.8)


def test_answer_metrics_average():
    metric = AnswerMetrics()
    metric.update(["Drusk", "Ana Corvel, brewer", "nothing"], [["Drusk"], ["Ana Corvel"], []])
    result = metric.compute()
    assert result["em"].item() == pytest.approx(0.5)
    assert result["f1"].item() == pytest.approx(0.9)
