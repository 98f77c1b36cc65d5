"""The covariance of strata that share completions, for the pooled PPI rows.

A human labels a completion on every dimension at once, so in a row pooling the
dimensions (``dimension = 'all'``) a labelled completion is labelled in every
dimension stratum, and its units' errors are shared. ``ppi.combine`` adds the
strata's variances as independent; the estimator's variance is that of its
per-completion totals of influence (the delta method for means of independent
completions, as ppi_py's M-estimation sandwich with a cluster-robust middle):

    theta_hat - theta ~ sum_c T_c,   T_c = sum_{units i of c} w_k(i) a_i,
    a_i = (r_i - mean r_k) / n_k    (labelled, r = Y - lambda_k Yhat),
    a_i = lambda_k (Yhat_i - mean Yhat_k,unlabelled) / N_k    (unlabelled),
    var = sum_c T_c^2 = sum_k w_k^2 var_k + 2 sum_{i < j in one completion} w a_i w a_j.

The first sum is ``combine``'s; the second needs, per pair of strata (k, l), nine
sums over the pairs of units of one completion (``CROSS_SUMS``: the products of
their centred scores by label status), which the warehouse computes in SQL
(int_ppi_stratum_cross_moments) and ``cross_moments`` here from arrays. The
lambdas enter only here, so the sums do not depend on them. With no completion
in two units of a row the second sum is 0 and the variance is ppi_py's.

The cluster is the completion (prompt x model), the unit the labels are drawn by:
rows of one dimension hold one unit per completion, so their variance is
unchanged. The interval's unbiased variance takes each product with the factor
its two parts take (n / (n - 1)); the skewness and the Welch-Satterthwaite
degrees of freedom take the design effect deff = var / var_independent as if
the row held n / deff independent units: the skewness times sqrt(deff), the
degrees of freedom divided by deff (exact at both ends: independent strata, and
strata that are copies of one another).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CROSS_SUMS = (
    "ll_yy",  # sum dy_a dy_b over pairs with both units labelled
    "ll_yh",  # dy_a dh_b
    "ll_hy",  # dh_a dy_b
    "ll_hh",  # dh_a dh_b
    "lu_yu",  # dy_a du_b: a labelled, b unlabelled
    "lu_hu",  # dh_a du_b
    "ul_uy",  # du_a dy_b: a unlabelled, b labelled
    "ul_uh",  # du_a dh_b
    "uu_uu",  # du_a du_b: both unlabelled
)
PAIR_TERMS = ("cross_var", "cross_iv", "cross_cls_var", "cross_cls_iv")


def cross_moments(
    units: pd.DataFrame, keys: list[str], cluster: list[str], unit: str
) -> pd.DataFrame:
    """The ``CROSS_SUMS`` per ``keys`` x stratum_a x stratum_b from unit rows (what
    the SQL computes): columns ``keys``, ``cluster`` (the completion), ``unit`` (what
    tells one completion's units apart in a row, sorted: a is the smaller),
    stratum, labelled (bool), y, yhat."""
    u = units.copy()
    g = u.groupby([*keys, "stratum", "labelled"])
    u["_my"] = g["y"].transform("mean")
    u["_mh"] = g["yhat"].transform("mean")
    lab = u["labelled"].to_numpy(dtype=bool)
    u["dy"] = np.where(lab, u["y"] - u["_my"], np.nan)
    u["dh"] = np.where(lab, u["yhat"] - u["_mh"], np.nan)
    u["du"] = np.where(lab, np.nan, u["yhat"] - u["_mh"])
    cols = [*keys, *cluster, unit, "stratum", "dy", "dh", "du"]
    pairs = u[cols].merge(u[cols], on=[*keys, *cluster], suffixes=("_a", "_b"))
    pairs = pairs[pairs[f"{unit}_a"] < pairs[f"{unit}_b"]]
    prod = {
        name: pairs[f"d{name[3]}_a"] * pairs[f"d{name[4]}_b"]
        for name in CROSS_SUMS  # e.g. lu_hu: dh_a * du_b
    }
    frame = pd.DataFrame(prod).fillna(0.0)
    frame[[*keys, "stratum_a", "stratum_b"]] = pairs[[*keys, "stratum_a", "stratum_b"]]
    out = frame.groupby([*keys, "stratum_a", "stratum_b"], as_index=False)[list(CROSS_SUMS)]
    return out.sum().assign(
        n_pairs=frame.groupby([*keys, "stratum_a", "stratum_b"]).size().to_numpy()
    )


def pair_terms(strata: pd.DataFrame, cross: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per ``keys`` group, the sums over its pairs of strata of 2 w_a w_b S_ab: the
    PPI variance's cross part (cross_var), the same with the interval's unbiased
    factors (cross_iv) and both for the human-only estimator (lambda 0). ``strata``:
    rows of ``stratum_estimates`` with a ``weight`` column."""
    if cross.empty:
        return pd.DataFrame(columns=[*keys, *PAIR_TERMS])
    side = strata[[*keys, "stratum", "weight", "ppi_lambda", "n_labelled", "n_unlabelled"]]
    df = cross.merge(
        side.rename(columns=lambda c: c if c in keys else f"{c}_a"), on=[*keys, "stratum_a"]
    ).merge(side.rename(columns=lambda c: c if c in keys else f"{c}_b"), on=[*keys, "stratum_b"])
    la, lb = (df[f"ppi_lambda_{s}"].fillna(0.0).to_numpy() for s in "ab")
    na, nb = (df[f"n_labelled_{s}"].to_numpy(dtype=float) for s in "ab")
    ua, ub = (df[f"n_unlabelled_{s}"].to_numpy(dtype=float) for s in "ab")
    s = {c: df[c].to_numpy(dtype=float) for c in CROSS_SUMS}
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = {
            "ll": (s["ll_yy"] - lb * s["ll_yh"] - la * s["ll_hy"] + la * lb * s["ll_hh"])
            / (na * nb),
            "lu": np.where(lb > 0, lb * (s["lu_yu"] - la * s["lu_hu"]) / (na * ub), 0.0),
            "ul": np.where(la > 0, la * (s["ul_uy"] - lb * s["ul_uh"]) / (ua * nb), 0.0),
            "uu": np.where(la * lb > 0, la * lb * s["uu_uu"] / (ua * ub), 0.0),
        }
        # the unbiased factors: each part's sizes, sqrt(n_a / (n_a - 1) * n_b / (n_b - 1))
        unbiased = {
            "ll": np.sqrt(na / (na - 1) * nb / (nb - 1)),
            "lu": np.sqrt(na / (na - 1) * ub / (ub - 1)),
            "ul": np.sqrt(ua / (ua - 1) * nb / (nb - 1)),
            "uu": np.sqrt(ua / (ua - 1) * ub / (ub - 1)),
        }
        cls = s["ll_yy"] / (na * nb)
        # a part that is 0 (lambda 0) stays 0 where its factor is not finite (N = 1)
        iv = sum(np.where(p != 0, p * unbiased[k], 0.0) for k, p in parts.items())
        ww = 2 * df["weight_a"].to_numpy() * df["weight_b"].to_numpy()
        # so does the human-only part: a stratum with one label (not estimable, noted
        # by combine) has its one label as its mean, cls 0, where n / (n - 1) is inf
        cls_iv = np.where(cls != 0, ww * cls * unbiased["ll"], 0.0)
    terms = pd.DataFrame(
        {
            "cross_var": ww * sum(parts.values()),
            "cross_iv": ww * iv,
            "cross_cls_var": ww * cls,
            "cross_cls_iv": cls_iv,
        }
    )
    terms[keys] = df[keys].to_numpy()
    return terms.groupby(keys, sort=True, dropna=False)[list(PAIR_TERMS)].sum().reset_index()


def design_effect(var: np.ndarray, var_independent: np.ndarray) -> np.ndarray:
    """var / var_independent, 1 where the independent variance is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        deff = np.where(var_independent > 0, var / var_independent, 1.0)
    return np.clip(np.nan_to_num(deff, nan=1.0), 1e-12, None)
