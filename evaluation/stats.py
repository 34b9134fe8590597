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
- `detectable_difference`, `questions_needed` and `power_at`: what a paired test of this kind can find, for
  planning: the normal approximation to the sign-flip test, with the spread of observed differences.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import DegenerateDataWarning, bootstrap, norm, permutation_test
from statsmodels.stats.multitest import multipletests

CONFIDENCE = 0.95
ALPHA = 0.05
POWER = 0.8
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


def _z(family: int, alpha: float) -> float:
    """The two-sided normal quantile at level alpha / family."""
    if family < 1 or not 0 < alpha < 1:
        raise ValueError(f"need a family of at least 1 and alpha in (0, 1): got {family}, {alpha}")
    return float(norm.ppf(1 - alpha / family / 2))


def _z_power(power: float) -> float:
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    return float(norm.ppf(power))


def _spread(differences) -> float:
    d = np.asarray(differences, dtype=float)
    if len(d) < 2 or np.ptp(d) == 0:
        raise ValueError(f"planning needs at least 2 paired differences that vary, got {d.tolist()[:5]}")
    return float(d.std(ddof=1))


def detectable_difference(differences, family: int = 1, power: float = POWER, alpha: float = ALPHA) -> float:
    """The smallest true mean difference δ that a two-sided paired test on as many questions as
    `differences` finds with probability `power` at level alpha / `family`, where Holm finds it whatever
    the family's other comparisons say; the differences' spread s stays as observed. The sign-flip test
    rejects when the mean passes z·√((s² + δ²)/n) (its null spread is the differences' root mean square),
    so δ solves δ = z_α·√((s² + δ²)/n) + z_power·s/√n; infinite when n ≤ z_α² (too few questions for the
    level)."""
    s, n = _spread(differences), len(differences)
    z_alpha, z_power = _z(family, alpha), _z_power(power)
    if n <= z_alpha ** 2:
        return math.inf
    # δ·√n - z_power·s = z_α·√(s² + δ²), squared: a quadratic in δ, its larger root
    a, b, c = n - z_alpha ** 2, -2 * math.sqrt(n) * z_power * s, (z_power ** 2 - z_alpha ** 2) * s ** 2
    return (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)


def questions_needed(differences, effect: float, family: int = 1, power: float = POWER,
                     alpha: float = ALPHA) -> int:
    """How many questions the test of `detectable_difference` needs to find a true mean difference of
    `effect` (in the differences' units) with probability `power`, the differences' spread as observed."""
    if not effect > 0:
        raise ValueError(f"the effect to find must be positive, got {effect}")
    s = _spread(differences)
    z_alpha, z_power = _z(family, alpha), _z_power(power)
    return math.ceil(((z_alpha * math.sqrt(s * s + effect * effect) + z_power * s) / effect) ** 2)


def power_at(differences, effect: float, family: int = 1, alpha: float = ALPHA) -> float:
    """The probability that the test of `detectable_difference` on as many questions as `differences` finds
    a true mean difference δ = `effect`, the spread s of the differences as observed:
    Φ((δ√n - z_α·√(s² + δ²)) / s)."""
    s, n, z_alpha = _spread(differences), len(differences), _z(family, alpha)
    return float(norm.cdf((effect * math.sqrt(n) - z_alpha * math.sqrt(s * s + effect * effect)) / s))


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
