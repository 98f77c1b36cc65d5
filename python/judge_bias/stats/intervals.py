"""95% intervals for rates whose units may be clustered (several per prompt).

A rate here is a ratio estimator p = sum(y) / sum(d) over units (y in [0, 1],
d = 1 per unit), with units grouped in clusters (prompts; items for the
perturbation marts). Its interval is Wilson's score interval computed with an
effective sample size (Korn and Graubard 1998, design-effect adjustment):

    var_c = G / (G - 1) sum_c (Y_c - p D_c)^2 / (sum_c D_c)^2   (cluster-robust,
                                                   linearised, G clusters, CR1)
    var_srs = p (1 - p) / (n - 1)                  (the same estimator with one
                                                   unit per cluster: G = n)
    n_eff = min(n, n var_srs / var_c)              (n when var_c = 0)

With one unit per cluster var_c equals var_srs, so n_eff = n and the interval
is the ordinary Wilson interval; units that move together in a prompt lower
n_eff and widen it. A group whose units all sit in one cluster has no
between-cluster variance to estimate: its n_eff is 1. Unlike a percentile bootstrap it does not
collapse to a point when every unit agrees (p = 0 or 1), and it needs only the
per-cluster sums, so a million rows cost one group-by. n_eff is capped at n
(deff >= 1, as Korn and Graubard do), so a rate of probabilities (y strictly
inside [0, 1]) gets at most the Wilson width of n binary units.

A difference of two such rates (the equal-opportunity bias) gets Newcombe's
hybrid score interval from the two Wilson intervals (Newcombe 1998, method
10), in its form for correlated estimates (Newcombe 1998b, method 10 with the
correlation phi): the two rates share prompts, so phi is their cluster-robust
correlation, sum_c u_c v_c / sqrt(sum_c u_c^2 sum_c v_c^2) with u_c, v_c each
rate's linearised cluster scores (0 when no cluster holds units of both).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

Z95 = float(stats.norm.ppf(0.975))


def wilson(p: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilson 95% interval for a proportion p from n units (n may be fractional)."""
    p = np.asarray(p, dtype=float)
    n = np.asarray(n, dtype=float)
    ok = n > 0
    low, high = proportion_confint(
        np.where(ok, p * n, 0.0), np.where(ok, n, 1.0), alpha=0.05, method="wilson"
    )
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


def clustered_rates(sums: pd.DataFrame, keys: list[str], cluster: str) -> pd.DataFrame:
    """Rate and design-effect Wilson interval per ``keys`` group from per-cluster sums.

    ``sums`` has one row per group x cluster with ``y`` (sum of the unit values)
    and ``d`` (number of units). Returns, indexed by ``keys``: n (units), rate,
    ci_low, ci_high, n_eff; groups without units are left out.
    """
    sums = sums.groupby([*keys, cluster], sort=False, observed=True)[["y", "d"]].sum()
    sums = sums[sums["d"] > 0]
    level = list(range(len(keys)))
    total = sums.groupby(level=level, sort=True).sum()
    rate = total["y"] / total["d"]
    rate_c = rate.reindex(sums.index.droplevel(-1)).to_numpy()
    resid2 = (sums["y"].to_numpy() - rate_c * sums["d"].to_numpy()) ** 2
    var = pd.Series(resid2, index=sums.index).groupby(level=level, sort=True).sum() / (
        total["d"] ** 2
    )
    n = total["d"].to_numpy(dtype=float)
    p = rate.to_numpy()
    g = sums.groupby(level=level, sort=True).size().reindex(total.index).to_numpy(dtype=float)
    v = var.reindex(total.index).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        v_c = v * g / (g - 1)
        n_eff = np.where(v > 0, np.minimum(n, n * p * (1 - p) / ((n - 1) * v_c)), n)
    n_eff = np.where(g < 2, np.minimum(n, 1.0), n_eff)
    low, high = wilson(p, n_eff)
    return pd.DataFrame(
        {"n": n, "rate": p, "ci_low": low, "ci_high": high, "n_eff": n_eff}, index=total.index
    )


def newcombe_difference(
    p1: np.ndarray,
    low1: np.ndarray,
    high1: np.ndarray,
    p2: np.ndarray,
    low2: np.ndarray,
    high2: np.ndarray,
    phi: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval for p1 - p2 from the two Wilson intervals;
    ``phi``: the correlation of the two estimates (0: independent samples), finite
    (ValueError otherwise: a missing correlation is the caller's to decide)."""
    p1, p2 = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
    phi = np.asarray(phi, dtype=float)
    if not np.all(np.isfinite(phi)):
        raise ValueError("newcombe_difference: phi must be finite (0 for independent estimates)")
    d = p1 - p2
    a, b = p1 - np.asarray(low1), np.asarray(high2) - p2
    c, e = np.asarray(high1) - p1, p2 - np.asarray(low2)
    low = d - np.sqrt(np.clip(a**2 - 2 * phi * a * b + b**2, 0, None))
    high = d + np.sqrt(np.clip(c**2 - 2 * phi * c * e + e**2, 0, None))
    return np.maximum(low, -1.0), np.minimum(high, 1.0)


def cluster_correlation(
    sums_a: pd.DataFrame, sums_b: pd.DataFrame, keys: list[str], cluster: str
) -> pd.Series:
    """Cluster-robust correlation of two rates of the same groups (per-cluster sums
    y, d as clustered_rates takes them): sum_c u_c v_c / sqrt(sum u^2 sum v^2) with
    u_c = (Y_c - p D_c) / D of the first rate, v_c likewise of the second.

    0 where a rate does not vary across clusters (every u_c = 0, e.g. a recall of
    1): the estimated covariance, sum_c u_c v_c, is then exactly 0, so 0 is the
    correlation Newcombe's interval should use, not a stand-in for a missing one;
    a cluster holding units of one rate only has score 0 in the other (its
    deviation from that rate is 0), which is what the fillna below writes."""

    def scores(sums: pd.DataFrame) -> pd.Series:
        sums = sums.groupby([*keys, cluster], sort=False, observed=True)[["y", "d"]].sum()
        level = list(range(len(keys)))
        total = sums.groupby(level=level).sum()
        idx = sums.index.droplevel(-1)
        rate = (total["y"] / total["d"]).reindex(idx).to_numpy()
        return pd.Series(
            (sums["y"].to_numpy() - rate * sums["d"].to_numpy())
            / total["d"].reindex(idx).to_numpy(),
            index=sums.index,
        )

    u, v = scores(sums_a), scores(sums_b)
    both = pd.concat([u.rename("u"), v.rename("v")], axis=1).fillna(0.0)
    level = list(range(len(keys)))
    g = both.assign(uv=both["u"] * both["v"], uu=both["u"] ** 2, vv=both["v"] ** 2)
    tot = g.groupby(level=level)[["uv", "uu", "vv"]].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = tot["uv"] / np.sqrt(tot["uu"] * tot["vv"])
    return phi.fillna(0.0)
