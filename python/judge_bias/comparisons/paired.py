"""The difference of two models' mean human scores, paired by prompt, estimated from
the judge's scores corrected by the human labels (prediction-powered inference).

Each model's mean is the stratified PPI++ estimator of ppi_model_scores
(judge_bias.ppi.estimator: theta_m = sum_k w_mk theta_mk, strata and lambdas as there).
The difference D = theta_A - theta_B is itself a stratified estimator: the strata of
A with weights +w and those of B with weights -w. Its variance is that of its
per-prompt totals of influence (the delta method for means of independent prompts,
ppi_py's sandwich with a prompt-clustered middle):

    D_hat - D ~ sum_p T_p,   T_p = sum_{units i at prompt p} s(i) w_k(i) a_i,
    var(D_hat) = sum_k w_k^2 var_k  (both models' own variances)
               + 2 sum_{i < j at one prompt} s_i w_i a_i s_j w_j a_j,

with a_i the unit's influence (ppi_clusters) and s = +1 for A, -1 for B. The pairs
of units of one prompt are those of A and B on the same prompt (their covariance is
what pairing by prompt removes: a hard prompt lowers both scores) and, in the rows
pooling the dimensions, the units of one completion on several dimensions. Their
sums of centred products (ppi_clusters.CROSS_SUMS, per pair of model x stratum) come
from SQL (int_comparison_cross_moments) and enter through ``ppi_clusters.pair_terms``
with signed weights.

The interval is Wald's on the unbiased variance (each part's n / (n - 1), the
``interval_variance`` of judge_bias.ppi.estimator): D_hat +- z se; the p-value is
2 (1 - Phi(|D_hat| / se)), so a pair is significant at 1 - ci_level exactly when its
interval excludes 0. With labels on the same prompts for both models, one stratum and
one lambda this is truescore's ``ppi_compare`` (PPI on the per-prompt difference) to
rounding; truescore tunes one lambda on the difference, we one per model and stratum
(the estimate of ppi_model_scores), a difference of definition tested apart.

Beside it: the human-only difference (lambda 0: the labelled units' means) and the
judge-only difference (the judges' mean scores over every unit), each with its
prompt-clustered interval, and the minimum detectable difference at the measured
standard error, (z_{1 - alpha/2} + z_power) se.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from judge_bias.comparisons.adjust import adjust_within
from judge_bias.ppi.clusters import pair_terms
from judge_bias.ppi.estimator import stratum_estimates

KEYS = ["judge", "is_panel", "dimension"]
PAIR = ["model_a", "model_b"]
CROSS_JUDGE = "gg"  # sum over pairs of (yhat_a - judge mean_a)(yhat_b - judge mean_b)
SEP = "\x1f"  # joins a model and a stratum into one stratum of the difference


def model_strata(moments: pd.DataFrame, ci_level: float, lam: float | None) -> pd.DataFrame:
    """Per judge x model x dimension x stratum (models, not `all`): the PPI++ stratum
    estimates with their weight within the model's row, and the judge-only moments
    (the mean and population variance of every judge score of the stratum)."""
    m = moments[moments["model"] != "all"]
    est = stratum_estimates(m, ci_level, lam, method="wald")
    est = est[est["n_units"] > 0].copy()
    est["weight"] = est["n_units"] / est.groupby([*KEYS, "model"])["n_units"].transform("sum")
    n, big_n = est["n_labelled"].astype(float), est["n_unlabelled"].astype(float)
    mh = est["mean_yhat_labelled"].fillna(0.0)
    mu = est["mean_yhat_unlabelled"].fillna(0.0)
    grand = (n * mh + big_n * mu) / (n + big_n)
    ss = n * (est["var_yhat_labelled"].fillna(0.0) + (mh - grand) ** 2) + big_n * (
        est["var_yhat_unlabelled"].fillna(0.0) + (mu - grand) ** 2
    )
    est["judge_var_pop"] = ss / (n + big_n)
    return est


def model_pairs(strata: pd.DataFrame) -> pd.DataFrame:
    """Every unordered pair of models (model_a < model_b) within a judge x dimension."""
    models = strata[[*KEYS, "model"]].drop_duplicates()
    pairs = models.merge(models, on=KEYS, suffixes=("_a", "_b"))
    return pairs[pairs["model_a"] < pairs["model_b"]].reset_index(drop=True)


def _signed_strata(pairs: pd.DataFrame, strata: pd.DataFrame) -> pd.DataFrame:
    """The strata of each pair's difference: A's with weight +w, B's with -w, each
    stratum named model SEP stratum."""
    sides = []
    for side, sign in (("a", 1.0), ("b", -1.0)):
        s = pairs.merge(strata, left_on=[*KEYS, f"model_{side}"], right_on=[*KEYS, "model"])
        s["weight"] = sign * s["weight"]
        s["stratum"] = s["model"] + SEP + s["stratum"]
        sides.append(s)
    return pd.concat(sides, ignore_index=True)


def _pair_cross(pairs: pd.DataFrame, cross: pd.DataFrame) -> pd.DataFrame:
    """The cross-moment rows of each pair: those whose two units belong to A or B."""
    parts = []
    for first, second in (("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")):
        c = pairs.merge(
            cross,
            left_on=[*KEYS, f"model_{first}", f"model_{second}"],
            right_on=[*KEYS, "first_model", "second_model"],
        )
        if first == second and not c.empty:  # both units of one model: once, not twice
            c = c[c["model_a"] != c["model_b"]]
        parts.append(c)
    c = pd.concat(parts, ignore_index=True)
    c["stratum_a"] = c["first_model"] + SEP + c["first_stratum"]
    c["stratum_b"] = c["second_model"] + SEP + c["second_stratum"]
    return c


def _judge_cross(signed: pd.DataFrame, pc: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The judge-only difference's cross parts, 2 w_a w_b gg / (U_a U_b), population
    and with the unbiased factors sqrt(U_a / (U_a - 1) U_b / (U_b - 1))."""
    side = signed[[*keys, "stratum", "weight", "n_units"]]
    df = pc.merge(
        side.rename(columns=lambda c: c if c in keys else f"{c}_a"), on=[*keys, "stratum_a"]
    ).merge(side.rename(columns=lambda c: c if c in keys else f"{c}_b"), on=[*keys, "stratum_b"])
    ua, ub = (df[f"n_units_{s}"].to_numpy(dtype=float) for s in "ab")
    with np.errstate(divide="ignore", invalid="ignore"):
        base = 2 * df["weight_a"] * df["weight_b"] * df[CROSS_JUDGE] / (ua * ub)
        factor = np.sqrt(ua / (ua - 1) * ub / (ub - 1))
    df["cross_judge_var"] = base
    df["cross_judge_iv"] = np.where(base != 0, base * factor, 0.0)
    return df.groupby(keys, dropna=False)[["cross_judge_var", "cross_judge_iv"]].sum().reset_index()


def differences(
    moments: pd.DataFrame,
    cross: pd.DataFrame,
    ci_level: float = 0.90,
    lam: float | None = None,
    power: float = 0.80,
) -> pd.DataFrame:
    """One row per judge (or panel) x dimension x model pair: the PPI difference of
    the two models' mean human scores (A - B) with its prompt-clustered interval and
    p-value, the human-only and judge-only differences likewise, the minimum
    detectable difference, and Holm and Benjamini-Hochberg adjusted p-values across
    the pairs of the judge x dimension.

    ``moments``: int_ppi_stratum_moments; ``cross``: int_comparison_cross_moments
    (KEYS, first_model, first_stratum, second_model, second_stratum, CROSS_SUMS, gg).
    """
    z = float(stats.norm.ppf(0.5 + ci_level / 2))
    z_power = float(stats.norm.ppf(power))
    strata = model_strata(moments, ci_level, lam)
    pairs = model_pairs(strata)
    keys = [*KEYS, *PAIR]
    if pairs.empty:
        return pd.DataFrame(columns=[*keys, "estimate"])
    signed = _signed_strata(pairs, strata)
    w = signed["weight"]
    parts = pd.DataFrame(
        {
            "estimate": w * signed["estimate"],
            "var": w**2 * signed["interval_variance"],
            "var_pop": w**2 * signed["std_error"] ** 2,
            "classical_estimate": w * signed["classical_estimate"],
            "classical_var": w**2 * signed["classical_interval_variance"],
            "judge_estimate": w * signed["judge_mean"],
            "judge_var": w**2 * signed["judge_var_pop"] / (signed["n_units"] - 1),
            "missing": signed["estimate"].isna().astype(int),
            "n_labelled_a": np.where(w > 0, signed["n_labelled"], 0),
            "n_labelled_b": np.where(w < 0, signed["n_labelled"], 0),
            "n_units_a": np.where(w > 0, signed["n_units"], 0),
            "n_units_b": np.where(w < 0, signed["n_units"], 0),
        }
    )
    parts[keys] = signed[keys]
    out = parts.groupby(keys, dropna=False).sum(min_count=1).reset_index()
    pc = _pair_cross(pairs, cross)
    if not pc.empty:
        terms = pair_terms(signed, pc, keys)
        within = pc[pc["first_model"] == pc["second_model"]]
        own = pair_terms(signed, within, keys)[[*keys, "cross_iv"]]
        jterms = _judge_cross(signed, pc, keys)
        out = out.merge(terms, on=keys, how="left").merge(jterms, on=keys, how="left")
        out = out.merge(own.rename(columns={"cross_iv": "own_iv"}), on=keys, how="left")
        pairs_n = pc[pc["first_model"] != pc["second_model"]].groupby(keys, dropna=False)
        out = out.merge(pairs_n["n_pairs"].sum().rename("n_paired_units").reset_index(),
                        on=keys, how="left")  # fmt: skip
    for c in ("cross_iv", "own_iv", "cross_cls_iv", "cross_judge_iv", "n_paired_units"):
        if c not in out:
            out[c] = 0.0
        out[c] = out[c].fillna(0.0)
    ok = out["missing"] == 0
    rows = pd.DataFrame({k: out[k] for k in keys})
    for name, est_col, var in (
        ("", "estimate", out["var"] + out["cross_iv"]),
        ("human_only_", "classical_estimate", out["classical_var"] + out["cross_cls_iv"]),
        ("judge_only_", "judge_estimate", out["judge_var"] + out["cross_judge_iv"]),
    ):
        valid = ok if name != "judge_only_" else out["judge_estimate"].notna()
        est = out[est_col].where(valid)
        se = np.sqrt(var.clip(lower=0.0)).where(valid)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = 2 * stats.norm.sf(np.abs(est / se))
        rows[f"{name}difference"] = est
        rows[f"{name}std_error"] = se
        rows[f"{name}ci_low"] = est - z * se
        rows[f"{name}ci_high"] = est + z * se
        rows[f"{name}p_value"] = np.where(se > 0, p, np.nan)
    # each model's variance, no pairing; float64: a column of Python floats (object
    # dtype after the merges) raised ZeroDivisionError on constant scores (0 / 0)
    independent = (out["var"] + out["own_iv"]).to_numpy(dtype=float)
    paired_var = (out["var"] + out["cross_iv"]).to_numpy(dtype=float)
    no_variance = ok & (independent <= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(independent > 0, paired_var / independent, np.nan)
    rows["pairing_variance_ratio"] = pd.Series(ratio, index=rows.index).where(ok)
    rows["min_detectable_difference"] = (z + z_power) * rows["std_error"]
    rows["judge_minus_human_gap"] = rows["judge_only_difference"] - rows["difference"]
    for c in ("n_labelled_a", "n_labelled_b", "n_units_a", "n_units_b", "n_paired_units"):
        rows[c] = out[c].astype(np.int64)
    rows["notes"] = pd.Series(
        "a stratum of one of the models has fewer than 2 human labels: no estimate",
        index=rows.index,
    ).where(~ok)
    rows.loc[no_variance, "notes"] = (
        "no variance in the scores (constant): pairing_variance_ratio null, p_value null"
    )
    rows = adjust_within(rows, KEYS)
    for flag, col in (("", "p_value"), ("_holm", "p_value_holm"), ("_bh", "p_value_bh")):
        p = rows[col]
        rows[f"significant{flag}"] = (p < (1 - ci_level)).astype("boolean").where(p.notna())
    rows["ci_level"] = ci_level
    return rows
