"""benchmarks/retrieval_baselines.py: its recall figures are recomputed from the per-question scores it commits."""

import json

import pytest

from benchmarks.common import RESULTS
from benchmarks.retrieval_baselines import KS, SCORES
from evaluation.scores import read_scores


def test_the_committed_recalls_are_recomputed_from_the_committed_scores():
    files = sorted(SCORES.glob("*/*.jsonl.gz"))
    if not files:
        pytest.skip("no committed retrieval_baselines scores")
    committed = json.loads((RESULTS / "retrieval_baselines.json").read_text())
    for path in files:
        run = read_scores(path)
        summary, key = run.summary(), f"{path.parent.name}.{run.method}"
        assert committed[f"{key}.questions"] == len(run.scores)
        assert [summary[f"recall@{k}"] for k in KS] == pytest.approx([committed[f"{key}.recall@{k}"] for k in KS])
