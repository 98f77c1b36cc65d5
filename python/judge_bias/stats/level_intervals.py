"""Intervals at any level for statistics whose units are clustered (items of one
prompt), shared by the drift, stability and binary-agreement marts.

- ``clustered_wilson``: a rate (mean of unit values in [0, 1]) with Wilson's score
  interval at an effective sample size n / design effect (Korn and Graubard 1998),
  the design effect from the cluster-robust (CR1) variance of the ratio estimator,
  as ``stats.intervals.clustered_rates`` does at 95%; here at ``level``.
- ``clustered_mean``: a mean of unit values (a paired difference) with the
  cluster-robust CR1 standard error and a t interval on G - 1 degrees of freedom.
- ``cluster_bootstrap_counts``: how often each cluster is drawn in each of B
  resamples of the clusters with replacement (the percentile bootstrap of a
  statistic that is a function of per-cluster sums is then one matrix product).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint


@dataclass(frozen=True)
class Estimate:
    """A point estimate, its interval (None when it has none) and a note saying why."""

    point: float | None
    low: float | None = None
    high: float | None = None
    note: str | None = None


def z_value(level: float) -> float:
    """The two-sided normal quantile of ``level`` (1.645 at 0.90)."""
    return float(stats.norm.ppf(0.5 + level / 2))


def cluster_codes(clusters: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 of the cluster labels, and G."""
    _, codes = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    return codes, int(codes.max()) + 1 if codes.size else 0


def effective_n(values: np.ndarray, clusters: np.ndarray, cap: bool = True) -> float:
    """n / design effect of the mean of ``values`` (each in [0, 1]):
    n p (1 - p) / ((n - 1) var_c), var_c the CR1 variance of the mean, capped at n
    (Korn-Graubard: deff >= 1, right for 0/1 units; ``cap`` False for fractional
    units, whose variance is below p (1 - p) and whose Wilson interval would
    otherwise over-cover); n when var_c = 0 (every cluster at the rate); 1 with one
    cluster (no between-cluster variance to estimate)."""
    y = np.asarray(values, dtype=float)
    n = y.size
    p = float(y.mean())
    codes, g = cluster_codes(clusters)
    if g < 2:
        return 1.0
    resid = np.bincount(codes, weights=y - p, minlength=g)
    var_c = g / (g - 1) * float(np.sum(resid**2)) / n**2
    if var_c > 0 and n > 1:
        n_eff = n * p * (1 - p) / ((n - 1) * var_c)
        return max(1.0, min(float(n), n_eff) if cap else n_eff)
    return float(n)


def clustered_wilson(
    values: np.ndarray, clusters: np.ndarray, level: float, cap: bool = True
) -> Estimate:
    """Mean of ``values`` (each in [0, 1]) with Wilson's interval at ``effective_n``."""
    y = np.asarray(values, dtype=float)
    if y.size == 0:
        return Estimate(None, note="no units")
    p = float(y.mean())
    g = cluster_codes(clusters)[1]
    n_eff = effective_n(y, clusters, cap)
    low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - level, method="wilson")
    note = "one prompt: the interval assumes one unit" if g < 2 else None
    return Estimate(p, float(min(low, p)), float(max(high, p)), note)


def clustered_mean(values: np.ndarray, clusters: np.ndarray, level: float) -> Estimate:
    """Mean of ``values`` with a CR1 cluster-robust t interval (G - 1 df); no interval
    (a note) with fewer than two clusters."""
    y = np.asarray(values, dtype=float)
    n = y.size
    if n == 0:
        return Estimate(None, note="no units")
    mean = float(y.mean())
    codes, g = cluster_codes(clusters)
    if g < 2:
        return Estimate(mean, note="fewer than 2 prompts: no interval")
    resid = np.bincount(codes, weights=y - mean, minlength=g)
    se = float(np.sqrt(g / (g - 1) * np.sum(resid**2) / n**2))
    t = float(stats.t.ppf(0.5 + level / 2, g - 1))
    return Estimate(mean, mean - t * se, mean + t * se)


def clustered_mean_p_value(values: np.ndarray, clusters: np.ndarray) -> float | None:
    """Two-sided p-value of mean = 0 with the CR1 standard error and G - 1 df
    (1.0 when every value is 0; None with fewer than two clusters)."""
    y = np.asarray(values, dtype=float)
    codes, g = cluster_codes(clusters)
    if y.size == 0 or g < 2:
        return None
    mean = float(y.mean())
    resid = np.bincount(codes, weights=y - mean, minlength=g)
    se = float(np.sqrt(g / (g - 1) * np.sum(resid**2) / y.size**2))
    if se == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * stats.t.sf(abs(mean) / se, g - 1))


def cluster_bootstrap_counts(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    """B x G matrix: how often each of G clusters is drawn in each resample."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_boot)


def cluster_bootstrap_weights(
    n_clusters: int, n_boot: int, seed: int, rows_per_draw: int = 16
) -> np.ndarray:
    """``cluster_bootstrap_counts`` as float64 (a matrix product's operand, so it runs
    in BLAS with no converted copy), drawn ``rows_per_draw`` resamples at a time into
    the one matrix: the same generator gives the same counts in the same order."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, n_clusters))
    p = np.full(n_clusters, 1.0 / n_clusters)
    for start in range(0, n_boot, rows_per_draw):
        stop = min(start + rows_per_draw, n_boot)
        out[start:stop] = rng.multinomial(n_clusters, p, size=stop - start)
    return out


def percentile(draws: np.ndarray, level: float) -> tuple[float | None, float | None]:
    """The percentile interval of the finite bootstrap draws (None when none are)."""
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return None, None
    low, high = np.quantile(finite, [0.5 - level / 2, 0.5 + level / 2])
    return float(low), float(high)
