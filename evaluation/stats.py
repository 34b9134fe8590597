"""How sure a figure is: bootstrap confidence intervals over questions, and paired tests between
methods run on the same questions (so that a difference of three questions reads as noise)."""

from __future__ import annotations

import numpy as np

RESAMPLES = 2000


def bootstrap_ci(values: list[float], confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean (resampling questions)."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return float("nan"), float("nan")
    means = x[np.random.default_rng(seed).integers(0, len(x), (RESAMPLES, len(x)))].mean(axis=1)
    tail = (1 - confidence) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def paired_test(a: list[float], b: list[float], seed: int = 0) -> tuple[float, float]:
    """Mean difference b - a over paired questions and its two-sided paired-bootstrap p-value
    (twice the share of resampled mean differences on the far side of zero, at most 1)."""
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if len(d) == 0:
        return float("nan"), float("nan")
    if not d.any():
        return 0.0, 1.0
    means = d[np.random.default_rng(seed).integers(0, len(d), (RESAMPLES, len(d)))].mean(axis=1)
    far = (means <= 0).mean() if d.mean() > 0 else (means >= 0).mean()
    return float(d.mean()), float(min(1.0, 2 * far))


def p_text(p: float) -> str:
    """A paired test's p-value as a table shows it: a bootstrap that never crossed zero gives 0, which
    means below its resolution, 2 / RESAMPLES."""
    return f"< {2 / RESAMPLES:.2g}" if p == 0 else f"{p:.2g}"
