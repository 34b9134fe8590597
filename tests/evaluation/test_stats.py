import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from evaluation.stats import (EXACT_MAX, detectable_difference, holm, interval, p_text, paired_test, power_at,
                              questions_needed, sign_flip_p, verdict)


def enumerated_p(differences) -> float:
    """The sign-flip p-value by brute force: the share of all 2^n sign patterns whose mean difference
    is at least as far from zero as the observed one."""
    d = np.asarray(differences, dtype=float)
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(d))))
    means = (signs * d).mean(axis=1)
    return float(np.mean(np.abs(means) >= abs(d.mean()) - 1e-12))


@pytest.mark.parametrize("differences", [
    [1, 1, 1],                                  # every question better: 2 of 8 patterns as extreme
    [1, -1, 1, 0, 0, 1],                        # ties leave the p-value as it is
    [0.5, -0.5, 1, 0.5, 0.5, 1, -1, 0.5, 0.5],  # recall-like halves
    list(np.random.default_rng(3).normal(0.2, 1, 12)),
])
def test_the_p_value_equals_a_full_enumeration_of_the_sign_patterns(differences):
    p, exact = sign_flip_p(differences)
    assert exact
    assert p == pytest.approx(enumerated_p(differences), abs=1e-12)
    assert paired_test(np.zeros(len(differences)), differences).p == pytest.approx(p, abs=1e-12)


def test_many_differences_are_sampled_and_agree_with_the_enumeration():
    d = list(np.random.default_rng(0).normal(0.3, 1, EXACT_MAX + 4))  # 2^20 patterns: enumerable here, not there
    p, exact = sign_flip_p(d)
    assert not exact and 0 < p
    assert p == pytest.approx(enumerated_p(d), abs=0.01)


def test_a_sampled_p_value_is_never_zero():
    p, exact = sign_flip_p([1.0] * 100)
    assert not exact and p > 0 and p_text(p) == "< 0.001"


def test_under_the_null_the_test_rejects_at_most_its_level():
    """1,000 simulated tables: per question, two scores drawn alike and handed to the two methods at
    random (exchangeable). The test may reject at 0.05 in at most 6% of them."""
    rng = np.random.default_rng(7)
    rejected = 0
    for _ in range(1000):
        n = int(rng.integers(20, 60))
        scores = rng.choice([0.0, 0.5, 1.0], size=(n, 2), p=[0.4, 0.2, 0.4])
        swap = rng.random(n) < 0.5
        a = np.where(swap, scores[:, 1], scores[:, 0])
        b = np.where(swap, scores[:, 0], scores[:, 1])
        rejected += sign_flip_p(b - a, seed=int(rng.integers(1 << 30)))[0] < 0.05
    assert rejected / 1000 <= 0.06


def test_paired_test_reads_a_real_difference_and_noise():
    same = paired_test([1, 0, 1], [1, 0, 1])
    assert (same.diff, same.p, same.n) == (0.0, 1.0, 3)
    a = np.zeros(43)
    b = a.copy()
    b[:3] = 1
    noise = paired_test(a, b)  # 3 questions of 43: 2 of 8 sign patterns are as extreme
    assert noise.diff == pytest.approx(3 / 43) and noise.p == pytest.approx(0.25) and noise.exact
    assert paired_test(b, a).p == noise.p and paired_test(b, a).diff == -noise.diff
    b[:15] = 1
    real = paired_test(a, b)
    assert real.p == pytest.approx(2 / 2 ** 15) and real.low > 0
    with pytest.raises(ValueError, match="same questions"):
        paired_test([1, 0], [1])


def test_holm_adjusts_a_hand_computed_family_and_leaves_untested_ones_out():
    # sorted 0.01, 0.03, 0.04 times 3, 2, 1 -> 0.03, 0.06, 0.04, made monotone -> 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, math.nan, 0.03]) == pytest.approx([0.03, 0.06, math.nan, 0.06], nan_ok=True)
    assert holm([]) == []


def test_a_verdict_reads_the_adjusted_p_value():
    assert verdict(0.05, 0.01) == "ahead" and verdict(-0.05, 0.01) == "behind"
    assert verdict(0.05, 0.06) == "no significant difference"
    assert verdict(0.0, math.nan) == "not tested"


def test_the_bca_interval_holds_the_mean_and_widens_with_spread():
    assert interval([0.4] * 10) == (0.4, 0.4)
    assert all(math.isnan(v) for v in interval([]))
    low, high = interval([0.0, 1.0] * 50)
    assert low < 0.5 < high and high - low == pytest.approx(2 * 1.96 * 0.05, abs=0.03)  # about ±1.96 standard errors
    narrow = interval([0.4, 0.6] * 50)
    assert narrow[1] - narrow[0] < (high - low) / 3


def test_p_values_print_with_two_digits_and_never_as_zero():
    assert (p_text(0.0163), p_text(1.0), p_text(0.0004), p_text(math.nan)) == ("0.016", "1", "< 0.001", "")


def test_the_detectable_difference_solves_the_sign_flip_tests_power_equation():
    """δ = z_α·√((s² + δ²)/n) + z_power·s/√n, z_α at alpha / family, two-sided, from scipy's normal."""
    d = np.random.default_rng(1).choice([-1.0, -0.5, 0.0, 0.0, 0.5, 1.0], 60)
    s, n = d.std(ddof=1), len(d)
    z_alpha, z_power = norm.ppf(1 - 0.05 / 3 / 2), norm.ppf(0.9)
    delta = detectable_difference(d, family=3, power=0.9)
    assert delta == pytest.approx(z_alpha * math.sqrt((s * s + delta * delta) / n) + z_power * s / math.sqrt(n))
    assert power_at(d, delta, family=3) == pytest.approx(0.9)
    assert questions_needed(d, delta, family=3, power=0.9) == n  # the same equation solved for n
    assert questions_needed(d, delta / 2, family=3, power=0.9) > 3 * n  # half the effect: about 4x the questions
    assert detectable_difference(d, family=1) < detectable_difference(d, family=3)


def test_the_sign_flip_test_finds_the_detectable_difference_about_as_often_as_planned():
    """200 simulated tables of 50 normal differences with the pilot's spread, their true mean the detectable
    difference at power 0.8, family 2: the exact test of the tables finds it at 0.025 in 0.8 of them, give or
    take 0.1."""
    rng = np.random.default_rng(11)
    pilot = rng.normal(0.0, 0.3, 50)
    delta, spread = detectable_difference(pilot, family=2), pilot.std(ddof=1)
    found = sum(sign_flip_p(rng.normal(delta, spread, 50), seed=i)[0] < 0.025 for i in range(200))
    assert abs(found / 200 - 0.8) <= 0.1


def test_planning_refuses_what_it_cannot_plan_with():
    assert detectable_difference([0.5, -0.5, 1.0], family=5) == math.inf  # 3 questions: too few for 0.01
    with pytest.raises(ValueError, match="vary"):
        detectable_difference([0.5] * 10)
    with pytest.raises(ValueError, match="positive"):
        questions_needed([0.5, -0.5, 1.0], 0.0)
    with pytest.raises(ValueError, match="family"):
        power_at([0.5, -0.5, 1.0], 0.1, family=0)
