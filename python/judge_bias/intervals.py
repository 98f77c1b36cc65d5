"""95% intervals for rates whose units may be clustered (several per prompt).

A rate here is a ratio estimator p = sum(y) / sum(d) over units (y in [0, 1],
d = 1 per unit), with units grouped in clusters (prompts; items for the
perturbation marts). Its interval is Wilson's score interval computed with an
effective sample size (Korn and Graubard 1998, design-effect adjustment):

    var_c = sum_c (Y_c - p D_c)^2 / (sum_c D_c)^2    (cluster-robust, linearised)
    n_eff = min(n, p (1 - p) / var_c)               (n when var_c = 0)

With one unit per cluster var_c is exactly p (1 - p) / n, so n_eff = n and the
interval is the ordinary Wilson interval; units that move together in a
prompt lower n_eff and widen it. Unlike a percentile bootstrap it does not
collapse to a point when every unit agrees (p = 0 or 1), and it needs only the
per-cluster sums, so a million rows cost one group-by. n_eff is capped at n
(deff >= 1, as Korn and Graubard do), so a rate of probabilities (y strictly
inside [0, 1]) gets at most the Wilson width of n binary units.

A difference of two such rates (the equal-opportunity bias) gets Newcombe's
hybrid score interval (Newcombe 1998, method 10) from the two Wilson intervals.
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
    v = var.reindex(total.index).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(v > 0, np.minimum(n, p * (1 - p) / v), n)
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
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval for p1 - p2 from the two Wilson intervals."""
    d = np.asarray(p1) - np.asarray(p2)
    low = d - np.sqrt((p1 - low1) ** 2 + (high2 - p2) ** 2)
    high = d + np.sqrt((high1 - p1) ** 2 + (p2 - low2) ** 2)
    return low, high
