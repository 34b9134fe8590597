"""benchmarks/power.py: the tilt of the simulated check, and pairing two runs' scores."""

import json

import numpy as np
import pytest

from benchmarks import power
from evaluation.scores import ScoredRun
from evaluation.stats import detectable_difference, power_at, questions_needed


def test_the_tilt_reaches_the_target_mean_and_keeps_the_kinds_of_differences():
    d = np.array([-1.0, -0.5, 0.0, 0.0, 0.0, 0.5, 1.0])
    w = power.tilted(d, 0.3)
    assert w @ d == pytest.approx(0.3) and w.sum() == pytest.approx(1.0)
    assert w[2] == w[3] == w[4] and w[0] < w[1] < w[2] < w[5] < w[6]  # ties stay ties, favourable ones gain
    assert power.tilted(d, 1.0) is None and power.tilted(np.zeros(3), 0.1) is None  # beyond what was observed


def test_the_simulated_power_reads_the_tilted_draws():
    d = np.array([-0.5, 0.0, 0.5, 1.0] * 10)
    assert power.simulated_power(d, 0.9, 0.05, 50) == 1.0  # nearly every draw is all 1s: found every time
    assert power.simulated_power(d, 2.0, 0.05, 50) is None


def test_differences_pair_the_questions_both_runs_scored_as_the_tables_do():
    a = ScoredRun("a", "c", {"q1": {"recall@5": 1.0}, "q2": {"recall@5": 0.5}, "q3": {"recall@5": None}}, "")
    b = ScoredRun("b", "c", {"q2": {"recall@5": 0.5}, "q1": {"recall@5": 0.5}, "q3": {"recall@5": 1.0}}, "")
    assert power.differences(a, b, "recall@5").tolist() == [0.0, 0.5]  # b's order; q3 unscored by a


def test_the_committed_table_is_recomputed_from_the_committed_scores():
    """Every planning figure of power.json but the simulated check, from the per-question scores it read."""
    committed = power.RESULTS / "power.json"
    if not committed.is_file():
        pytest.skip("benchmarks/results/power.json is not committed")
    flat = json.loads(committed.read_text())
    comparisons = power.kirag_comparisons() + power.mind_comparisons()
    assert len(comparisons) == len({k.split(".")[0] for k in flat if k[0].isdigit()})
    for i, c in enumerate(comparisons):
        d, family, effect = c["differences"], c["family"], flat["effect"] / 100
        assert (flat[f"{i}.comparison"], flat[f"{i}.family"], flat[f"{i}.questions"]) == (
            c["comparison"], family, len(d))
        assert flat[f"{i}.difference"] == pytest.approx(100 * d.mean())
        assert flat[f"{i}.detectable"] == pytest.approx(100 * detectable_difference(d, family, flat["power"]))
        assert flat[f"{i}.power_at_effect"] == pytest.approx(power_at(d, effect, family))
        assert flat[f"{i}.questions_needed"] == questions_needed(d, effect, family, flat["power"])
