import numpy as np
import pytest

from evaluation.stats import RESAMPLES, bootstrap_ci, p_text, paired_test


def test_bootstrap_interval_of_a_constant_is_the_constant_and_widens_with_spread():
    assert bootstrap_ci([0.4] * 10) == (pytest.approx(0.4), pytest.approx(0.4))
    low, high = bootstrap_ci([0.0, 1.0] * 50)
    assert low < 0.5 < high and high - low == pytest.approx(2 * 1.96 * 0.05, abs=0.03)  # ~ ±1.96 standard errors


def test_paired_test_tells_a_real_difference_from_noise():
    assert paired_test([1, 0, 1], [1, 0, 1]) == (0.0, 1.0)
    assert paired_test([0] * 20, [1] * 20) == (1.0, 0.0)
    # 43 questions, the second method right on 3 more: noise
    a = np.zeros(43)
    b = a.copy()
    b[:3] = 1
    diff, p = paired_test(a.tolist(), b.tolist())
    assert diff == pytest.approx(3 / 43) and p > 0.05
    diff, p = paired_test(b.tolist(), a.tolist())  # symmetric
    assert diff == pytest.approx(-3 / 43) and p > 0.05
    b[:15] = 1
    assert paired_test(a.tolist(), b.tolist())[1] < 0.01


def test_a_p_value_of_zero_reads_as_below_the_bootstrap_resolution():
    assert p_text(0.0) == f"< {2 / RESAMPLES:.2g}" == "< 0.001"
    assert (p_text(0.0163), p_text(1.0)) == ("0.016", "1")
