"""How sure a figure is, as information retrieval reports it.

- `interval`: the BCa bootstrap interval of a mean over questions (`scipy.stats.bootstrap`).
- `paired_test`: two methods scored on the same questions. The p-value is the paired randomization
  (sign-flip) test's (`scipy.stats.permutation_test`): under the null hypothesis the two methods'
  scores of a question are exchangeable, so each difference is as likely positive as negative.
  Questions with no difference cannot change sign and are left out, which leaves the p-value as it is.
  The test enumerates all 2^m sign patterns of the m remaining differences when m <= EXACT_MAX, and
  draws FLIPS random patterns otherwise; a Monte Carlo p-value counts the observed pattern too, so it
  is never 0.
- `holm`: Holm-Bonferroni adjusted p-values over one table's family of comparisons (statsmodels).
  A verdict reads the adjusted p-value.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import DegenerateDataWarning, bootstrap, permutation_test
from statsmodels.stats.multitest import multipletests

CONFIDENCE = 0.95
ALPHA = 0.05
EXACT_MAX = 16  # up to 2^16 = 65,536 sign patterns are enumerated
FLIPS = 20_000  # random sign patterns otherwise
RESAMPLES = 9_999  # bootstrap resamples of an interval


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def interval(values, confidence: float = CONFIDENCE, seed: int = 0) -> tuple[float, float]:
    """The BCa bootstrap interval of the mean of `values` (resampling questions); constant values give
    the constant, no values (nan, nan). Where BCa is undefined (a bootstrap distribution too lumpy for
    its bias correction), the percentile interval."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return math.nan, math.nan
    if np.ptp(x) == 0:
        return float(x[0]), float(x[0])
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            bounds = bootstrap((x,), _mean, confidence_level=confidence, n_resamples=RESAMPLES, method=method,
                               vectorized=True, rng=np.random.default_rng(seed)).confidence_interval
        if not (math.isnan(bounds.low) or math.isnan(bounds.high)):
            break
    return float(bounds.low), float(bounds.high)


@dataclass(frozen=True)
class Paired:
    """A paired comparison of `b` against `a` on `n` questions: the mean difference b - a, its BCa
    interval, the sign-flip test's two-sided p-value, and whether that p-value was exact."""

    n: int
    diff: float
    low: float
    high: float
    p: float
    exact: bool


def sign_flip_p(differences, seed: int = 0) -> tuple[float, bool]:
    """The two-sided p-value of the paired sign-flip test on `differences`, and whether it is exact."""
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    if len(d) <= 1:  # the one pattern and its mirror image are equally extreme
        return 1.0, True
    exact = len(d) <= EXACT_MAX
    result = permutation_test((d,), _mean, permutation_type="samples", vectorized=True,
                              n_resamples=2 ** len(d) if exact else FLIPS, alternative="two-sided",
                              rng=np.random.default_rng(seed))
    return float(min(1.0, result.pvalue)), exact


def paired_test(a, b, seed: int = 0) -> Paired:
    """`b` against `a`, both scored on the same questions in the same order."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"a paired test needs scores of the same questions: {a.shape} against {b.shape}")
    d = b - a
    if len(d) == 0:
        return Paired(0, math.nan, math.nan, math.nan, math.nan, True)
    p, exact = sign_flip_p(d, seed)
    low, high = interval(d, seed=seed)
    return Paired(len(d), float(d.mean()), low, high, p, exact)


def holm(p_values) -> list[float]:
    """Holm-Bonferroni adjusted p-values of one family of comparisons, in the given order; a nan (a
    comparison that could not be made) stays nan and is not counted in the family."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(len(p), math.nan)
    tested = ~np.isnan(p)
    if tested.any():
        adjusted[tested] = multipletests(p[tested], method="holm")[1]
    return adjusted.tolist()


def verdict(diff: float, p_adjusted: float, alpha: float = ALPHA) -> str:
    """Plain words for a comparison, from its Holm-adjusted p-value."""
    if math.isnan(p_adjusted):
        return "not tested"
    if p_adjusted < alpha and diff != 0:
        return "ahead" if diff > 0 else "behind"
    return "no significant difference"


def p_text(p: float) -> str:
    """A p-value as a table shows it: two significant digits, never 0 (a sign-flip p-value is not)."""
    if math.isnan(p):
        return ""
    return f"{p:.2g}" if p >= 0.001 else "< 0.001"
