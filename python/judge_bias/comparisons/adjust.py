"""Multiple-testing adjustments across the model pairs of one grain (a judge x
dimension): Holm's (1979) step-down family-wise adjustment and Benjamini and
Hochberg's (1995) false-discovery-rate adjustment, as adjusted p-values. Missing
p-values (a pair with no estimate) are left out of the family and stay missing.
The reference is statsmodels.stats.multitest.multipletests (tests/test_comparisons.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's adjusted p-values: max over the smaller-or-equal ranks of (m - rank) p,
    capped at 1; NaN stays NaN and does not count in m."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    order = np.argsort(q, kind="stable")
    scaled = (m - np.arange(m)) * q[order]
    adjusted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    res = np.empty(m)
    res[order] = adjusted
    out[ok] = res
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values): min over the larger-or-equal
    ranks of m p / rank, capped at 1; NaN stays NaN and does not count in m."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    order = np.argsort(q, kind="stable")
    scaled = q[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    res = np.empty(m)
    res[order] = adjusted
    out[ok] = res
    return out


def adjust_within(frame: pd.DataFrame, keys: list[str], column: str = "p_value") -> pd.DataFrame:
    """``frame`` with p_value_holm and p_value_bh: ``column`` adjusted within each
    ``keys`` group, and n_tests, the pairs with a p-value in the group."""
    out = frame.reset_index(drop=True)
    p_all = out[column].to_numpy(dtype=float)
    h, b, n = np.full(len(out), np.nan), np.full(len(out), np.nan), np.zeros(len(out), int)
    for idx in out.groupby(keys, sort=False, dropna=False).indices.values():
        p = p_all[idx]
        h[idx], b[idx], n[idx] = holm(p), benjamini_hochberg(p), int(np.isfinite(p).sum())
    return out.assign(p_value_holm=h, p_value_bh=b, n_tests=n)
