"""How many human labels a target precision needs, with and without the judges
(label_budget), from the PPI variance terms the warehouse measured.

For one model x dimension with U units (completions) in strata of weights w_k =
U_k / U, n human labels allocated in proportion (n_k = n w_k, N_k = U_k - n_k left to
the judge), the PPI++ variance of the mean human score at the measured moments is

    V(n) = sum_k w_k^2 [(v_y - 2 lambda_k c + lambda_k^2 v_f) / n_k + lambda_k^2 v_f / N_k],
    lambda_k = clip(c / (v_f (1 + n_k / N_k)), 0, 1)

(v_y the human scores' variance, v_f the judge scores' over all units, c their
covariance: population moments of the stratum, the moments of int_ppi_stratum_moments).
The labels needed for a target half-width h are the smallest n in [2, U - 1] with
z sqrt(V(n)) <= h, z the normal quantile at ci_level: the search truescore's
``required_gold_labels`` runs on the moments a binary judge's sensitivity and
specificity imply (tests/test_comparisons.py checks both agree). Without the judge
(lambda 0) it is the closed form n = z^2 sum_k w_k v_y,k / h^2, rounded up. The judge
used is the panel of all judges (its units' judge score is the judges' mean) and,
beside it, the single judge that needs the fewest labels.

The minimum detectable difference at the labels you have: (z + z_power) sqrt(2 V(n)),
the smallest difference between this model and another with the same variance that a
two-sided test at alpha = 1 - ci_level detects with probability ``power`` (prompts
not shared; pairing by prompt shrinks it: model_comparisons has it per pair).

The row `all` of a model needs, as a human labels a completion on every dimension at
once, the most labels any of its dimensions needs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from judge_bias.comparisons.paired import model_strata

GROUP = ["judge", "is_panel", "model", "dimension"]


def ppi_variance(n: np.ndarray, strata: pd.DataFrame) -> np.ndarray:
    """V(n) for label counts ``n`` (an array) over the strata of one group (columns
    weight, n_units, var_y, cov_y_yhat, judge_var_pop)."""
    n = np.asarray(n, dtype=float)[:, None]
    w = strata["weight"].to_numpy(dtype=float)[None, :]
    u = strata["n_units"].to_numpy(dtype=float)[None, :]
    vy, c, vf = (strata[k].to_numpy(dtype=float)[None, :]
                 for k in ("var_y", "cov_y_yhat", "judge_var_pop"))  # fmt: skip
    nk = n * w
    uk = u - nk
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where((uk > 0) & (vf > 0), np.clip(c / (vf * (1 + nk / uk)), 0.0, 1.0), 0.0)
        v = (vy - 2 * lam * c + lam**2 * vf) / nk + np.where(lam > 0, lam**2 * vf / uk, 0.0)
    return np.sum(w**2 * v, axis=1)


def labels_needed(strata: pd.DataFrame, half_width: float, z: float) -> tuple[int, float, bool]:
    """(labels, the half-width they give, feasible): the smallest n in [2, U - 1] with
    z sqrt(V(n)) <= half_width; when none, the n with the smallest half-width."""
    total = int(strata["n_units"].sum())
    if total < 3:
        return 0, float("nan"), False
    n = np.arange(2, total)
    hw = z * np.sqrt(np.clip(ppi_variance(n, strata), 0.0, None))
    ok = np.flatnonzero(hw <= half_width)
    if ok.size:
        return int(n[ok[0]]), float(hw[ok[0]]), True
    best = int(np.nanargmin(hw))
    return int(n[best]), float(hw[best]), False


def human_only_needed(strata: pd.DataFrame, half_width: float, z: float) -> int:
    """z^2 sum_k w_k v_y,k / h^2 rounded up: the human-only mean's labels (lambda 0)."""
    w, vy = strata["weight"].to_numpy(dtype=float), strata["var_y"].to_numpy(dtype=float)
    return int(np.ceil(z**2 * float(np.sum(w * vy)) / half_width**2))


ROW_VALUES = (
    "labels_needed",
    "best_half_width",
    "feasible",
    "labels_needed_human_only",
    "n_labelled",
    "n_units",
    "half_width_now",
    "human_only_half_width_now",
    "min_detectable_difference",
    "human_only_min_detectable_difference",
)


def budget_rows(
    moments: pd.DataFrame,
    half_width: float,
    ci_level: float = 0.90,
    power: float = 0.80,
) -> pd.DataFrame:
    """label_budget: one row per model x dimension (and `all`)."""
    z = float(stats.norm.ppf(0.5 + ci_level / 2))
    z_power = float(stats.norm.ppf(power))
    m = moments[(moments["model"] != "all") & (moments["dimension"] != "all")]
    strata = model_strata(m, ci_level, None)
    per_judge = []
    for key, g in strata.groupby(GROUP, sort=True, dropna=False):
        row = dict(zip(GROUP, key, strict=True))
        if (g["n_labelled"] < 2).any():
            row["note"] = "a stratum with fewer than 2 human labels: the variances are unknown"
            per_judge.append(row)
            continue
        need, hw, feasible = labels_needed(g, half_width, z)
        n_now = int(g["n_labelled"].sum())
        se_now = float(np.sqrt(max(ppi_variance(np.array([n_now]), g)[0], 0.0)))
        cls_now = float(np.sqrt(np.sum(g["weight"] ** 2 * g["var_y"] / g["n_labelled"])))
        row |= {
            "labels_needed": need if feasible else None,
            "best_half_width": hw,
            "feasible": feasible,
            "labels_needed_human_only": human_only_needed(g, half_width, z),
            "n_labelled": n_now,
            "n_units": int(g["n_units"].sum()),
            "half_width_now": z * se_now,
            "human_only_half_width_now": z * cls_now,
            "min_detectable_difference": (z + z_power) * np.sqrt(2.0) * se_now,
            "human_only_min_detectable_difference": (z + z_power) * np.sqrt(2.0) * cls_now,
        }
        per_judge.append(row)
    # every column, also when no group had labels enough (its rows carry only a note)
    pj = pd.DataFrame(per_judge).reindex(columns=[*GROUP, "note", *ROW_VALUES])
    if pj.empty:
        return pd.DataFrame(columns=["model", "dimension"])
    return _rows(pj, half_width, ci_level, power)


def _rows(pj: pd.DataFrame, half_width: float, ci_level: float, power: float) -> pd.DataFrame:
    """Per model x dimension: the panel's figures, and the single judge needing fewest."""
    for c in ("labels_needed", "feasible", "note"):
        if c not in pj:
            pj[c] = None
    panel = pj[pj["is_panel"]].set_index(["model", "dimension"])
    judges = pj[~pj["is_panel"] & pj["labels_needed"].notna()]
    best = judges.sort_values(["labels_needed", "judge"]).groupby(["model", "dimension"]).first()
    out = panel.drop(columns=["judge", "is_panel"]).join(
        best[["judge", "labels_needed"]].rename(
            columns={"judge": "best_judge", "labels_needed": "labels_needed_best_judge"}
        ),
        how="outer",
    )
    out = out.reset_index()
    out["labels_saved"] = out["labels_needed_human_only"] - out["labels_needed"]
    pooled = out.groupby("model", as_index=False).agg(
        labels_needed=("labels_needed", lambda s: s.max() if s.notna().all() else None),
        labels_needed_human_only=("labels_needed_human_only", "max"),
        feasible=("feasible", lambda s: bool(s.fillna(False).all())),
        n_labelled=("n_labelled", "min"),
        n_units=("n_units", "max"),
    )
    pooled["dimension"] = "all"
    pooled["labels_saved"] = pooled["labels_needed_human_only"] - pooled["labels_needed"]
    pooled["note"] = "the most labels any dimension needs (a label covers every dimension)"
    out = pd.concat([out, pooled], ignore_index=True)
    out["target_half_width"] = half_width
    out["ci_level"] = ci_level
    out["power"] = power
    return out.sort_values(["model", "dimension"]).reset_index(drop=True)
