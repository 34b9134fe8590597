"""benchmarks/extraction_settings.py: how a setting is named, what a passage scores, and the rule that picks one."""

import argparse
import json

import pytest

from benchmarks.common import RESULTS, read_rows
from benchmarks.extraction_settings import MAX_COST, choose, per_passage, setting
from core.types import Triple
from evaluation.stats import paired_test
from kg.store import KGStore


def test_a_setting_is_demonstrations_colon_tokens():
    assert setting("5:512") == (5, 512)
    with pytest.raises(argparse.ArgumentTypeError, match="DEMONSTRATIONS:MAX_NEW_TOKENS"):
        setting("5x512")


def test_a_passage_scores_recall_and_f1_against_the_reference(tmp_path):
    ours, reference = KGStore(tmp_path / "ours"), KGStore(tmp_path / "reference")
    ours.add("p", [Triple.make("Paris", "capital of", "France", "p"), Triple.make("cheese", "is", "tasty", "p")])
    reference.add("p", [Triple.make("Paris", "is capital of", "France", "p"),
                        Triple.make("Paris", "population", "2 million", "p"),
                        Triple.make("Seine", "flows through", "Paris", "p")])
    reference.add("q", [Triple.make("a", "b", "c", "q")])
    ours.add("q", [])  # the LM left it without triples
    # one match ("Paris capital of France" in "Paris is capital of France"): precision 1/2, recall 1/3, F1 2/5
    assert per_passage(ours, reference, "p") == {"passage_id": "p", "triples": 2, "precision": 0.5,
                                                 "recall": pytest.approx(1 / 3), "f1": pytest.approx(0.4)}
    assert per_passage(ours, reference, "q") == {"passage_id": "q", "triples": 0, "precision": 0.0, "recall": 0.0,
                                                 "f1": 0.0}  # nothing extracted


def row(demos, tokens, f1, cost):
    return {"demonstrations": demos, "max new tokens": tokens, "F1 a passage": f1, "cost vs first": cost}


def test_another_setting_wins_only_ahead_significantly_and_within_the_cost_cap():
    rows = [row(2, 256, 0.30, 1.0), row(5, 512, 0.40, 1.8), row(3, 384, 0.35, 1.2)]

    def tests(*ahead):
        return [{"setting": s, "metric": m, "verdict": "ahead" if (s, m) in ahead else "no significant difference"}
                for s in ("5:512", "3:384") for m in ("f1", "recall")]

    assert choose(rows, tests()) is rows[0]
    assert choose(rows, tests(("5:512", "recall"))) is rows[0]  # recall alone does not choose
    assert choose(rows, tests(("5:512", "f1"), ("3:384", "f1"))) is rows[1]  # the better F1 of those ahead
    rows[1]["cost vs first"] = MAX_COST + 0.1
    assert choose(rows, tests(("5:512", "f1"), ("3:384", "f1"))) is rows[2]


def test_the_committed_p_values_are_recomputed_from_the_committed_per_passage_scores():
    results = RESULTS / "extraction_settings.json"
    if not (RESULTS / "extraction_settings").is_dir():
        pytest.skip("no committed extraction_settings scores")
    figures = json.loads(results.read_text())
    scores = {}
    for path in (RESULTS / "extraction_settings").glob("*.jsonl.gz"):
        rows = read_rows(path)
        scores[rows[0]["setting"]] = rows
    tested = sorted({k.split(".")[1] for k in figures if k.startswith("paired.")})
    first = next(s for s in scores if s not in tested)
    committed, again = [], []
    for name in tested:
        for metric in ("f1", "recall"):
            committed.append(figures[f"paired.{name}.{metric}.p"])
            assert [r["passage_id"] for r in scores[name]] == [r["passage_id"] for r in scores[first]]
            again.append(paired_test([r[metric] for r in scores[first]], [r[metric] for r in scores[name]]).p)
    assert again == pytest.approx(committed)
    assert figures[f"{first}.F1 a passage"] == pytest.approx(sum(r["f1"] for r in scores[first]) / len(scores[first]))
