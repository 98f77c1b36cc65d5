"""Stratified prediction-powered inference (PPI++) of a mean human score from a few
human labels and many judge ratings (Angelopoulos, Duchi and Zrnic 2023, "PPI++";
Fisch et al. 2024, "Stratified prediction-powered inference").

In stratum k there are n labelled units (a human score Y and the judge's score
Yhat) and N unlabelled units (the judge's score only). For lambda in [0, 1]:

    theta_k(lambda) = mean(Y) + lambda * (mean(Yhat_unlabelled) - mean(Yhat_labelled))
    var_k(lambda)   = var(Y - lambda Yhat) / n + lambda^2 var(Yhat_unlabelled) / N

with population variances (ddof 0), as ppi_py's ``ppi_mean_ci``. The tuned
lambda (PPI++ power tuning, ppi_py's ``lam=None``) minimises var_k:

    lambda_k = cov(Y, Yhat) / ((1 + n / N) s^2),  clipped to [0, 1],

cov the population covariance over the labelled units and s^2 the sample
variance (ddof 1) of all n + N judge scores. lambda = 0 is the classical
human-only mean (mean(Y), var(Y) / n); lambda = 1 is plain PPI. The strata
combine with weights w_k = (n_k + N_k) / sum_j (n_j + N_j):

    theta = sum_k w_k theta_k,   var = sum_k w_k^2 var_k,   theta +- z sqrt(var)

(the stratified estimator of EmertonData/glide), when no completion has units in
two strata; where they do (rows pooling the dimensions), the strata covary and
``combine`` adds their covariances from cross moments (``ppi_clusters``).
Everything is a function of nine moments per stratum (``MOMENTS``; five more for
the interval), which the warehouse computes in SQL, so a million ratings cost one
group-by and the frame here has one row per stratum.

The interval. ppi_py's is Wald's, theta +- z sqrt(var) (``method="wald"``).
With few labels and scores piled at one end of the scale (Play Favorites'
Faithfulness: most completions score 1.0), the estimator is skewed and Wald's
interval under-covers (about 0.82 for a 90% interval at 20 labels). The
default, ``method="skew"``, is Hall's (1992) skewness-corrected Student
interval: with T = (theta_hat - theta) / se and a the estimator's skewness,

    T1 = T + a T^2 / 3 + a^2 T^3 / 27 + a / 6

is nearer normal than T and increasing in T, so the interval is
theta_hat - T(+-q) se with T(x) = 3 / a ((1 + a (x - a / 6))^(1/3) - 1). For a
mean of n values a = gamma / sqrt(n) (gamma their skewness), Hall's case; here
a = k3 / var^(3/2), k3 the third cumulant of the estimator, sum_k w_k^3 k3_k with
k3_k = m3(Y - lambda Yhat) / n^2 + lambda^3 m3(Yhat_unlabelled) / N^2 (m3 a
population third central moment: ``THIRD_MOMENTS``). se uses the unbiased
variances (divisor n - 1) and q is Student's t quantile on Welch-Satterthwaite's
degrees of freedom. a = 0 gives Student's interval. The estimate and std_error
are ppi_py's either way.

Assumptions: within a stratum the labelled units are a uniform random sample of
the stratum's units (labels missing at random given the stratum), units are
independent, and n and N are large enough for the normal approximation. The
judge may be biased in any way: the labelled units measure and remove the bias
(the rectifier), so the estimate is unbiased whatever the judge does; a good
judge only narrows the interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from judge_bias.ppi.clusters import design_effect, pair_terms

MOMENTS = (
    "n_labelled",
    "mean_y",
    "mean_yhat_labelled",
    "var_y",
    "var_yhat_labelled",
    "cov_y_yhat",
    "n_unlabelled",
    "mean_yhat_unlabelled",
    "var_yhat_unlabelled",
)
THIRD_MOMENTS = (  # population third central (co-)moments, for the skewness-corrected interval
    "m3_y",
    "m3_y_y_yhat",
    "m3_y_yhat_yhat",
    "m3_yhat_labelled",
    "m3_yhat_unlabelled",
)
INTERVALS = ("skew", "wald")
MIN_LABELLED = 2  # a variance from fewer labels is 0 by construction, not an estimate
MIN_UNLABELLED = 2  # below it, lambda = 0: nothing to learn from the judge's other ratings


def moments(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> dict[str, float]:
    """The nine moments of one stratum from its arrays (what the SQL computes)."""
    y, yhat, yu = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    if y.shape != yhat.shape:
        raise ValueError(f"{y.size} human scores but {yhat.size} judge scores")
    n, big_n = y.size, yu.size
    return {
        "n_labelled": n,
        "mean_y": y.mean() if n else np.nan,
        "mean_yhat_labelled": yhat.mean() if n else np.nan,
        "var_y": y.var() if n else np.nan,
        "var_yhat_labelled": yhat.var() if n else np.nan,
        "cov_y_yhat": ((y - y.mean()) * (yhat - yhat.mean())).mean() if n else np.nan,
        "n_unlabelled": big_n,
        "mean_yhat_unlabelled": yu.mean() if big_n else np.nan,
        "var_yhat_unlabelled": yu.var() if big_n else np.nan,
        **third_moments(y, yhat, yu),
    }


def third_moments(y: np.ndarray, yhat: np.ndarray, yu: np.ndarray) -> dict[str, float]:
    """The five ``THIRD_MOMENTS`` of one stratum from its arrays."""
    dy, dh = (a - a.mean() if a.size else a for a in (y, yhat))
    du = yu - yu.mean() if yu.size else yu
    lab, unl = y.size > 0, yu.size > 0
    return {
        "m3_y": (dy**3).mean() if lab else np.nan,
        "m3_y_y_yhat": (dy * dy * dh).mean() if lab else np.nan,
        "m3_y_yhat_yhat": (dy * dh * dh).mean() if lab else np.nan,
        "m3_yhat_labelled": (dh**3).mean() if lab else np.nan,
        "m3_yhat_unlabelled": (du**3).mean() if unl else np.nan,
    }


def z_value(ci_level: float) -> float:
    if not 0 < ci_level < 1:
        raise ValueError(f"ci_level must be between 0 and 1, not {ci_level!r}")
    return float(stats.norm.ppf(0.5 + ci_level / 2))


def hall_inverse(x: np.ndarray | float, a: np.ndarray | float) -> np.ndarray:
    """T such that Hall's T1(T) = T + a T^2/3 + a^2 T^3/27 + a/6 equals x (T1 is
    monotone in T for every a; a = 0 is the identity)."""
    x, a = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(a, dtype=float))
    small = np.abs(a) < 1e-12
    safe = np.where(small, 1.0, a)
    t = 3.0 / safe * (np.cbrt(1.0 + safe * (x - safe / 6.0)) - 1.0)
    return np.where(small, x, t)


def interval(
    estimate: np.ndarray,
    var: np.ndarray,
    k3: np.ndarray,
    ci_level: float,
    method: str,
    unbiased_var: np.ndarray | None = None,
    df_denominator: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The interval ends of an estimator with variance ``var`` (ppi_py's) and third
    cumulant ``k3``: Wald's, estimate +- z sqrt(var); or Hall's skewness-corrected
    Student interval, estimate - T(+-q) sqrt(unbiased_var), T = ``hall_inverse`` at
    the skewness a = k3 / var^(3/2) and q the t quantile on Welch-Satterthwaite's
    unbiased_var^2 / df_denominator degrees of freedom (the normal one when that is
    not finite)."""
    if method == "wald":
        z = z_value(ci_level)
        return estimate - z * np.sqrt(var), estimate + z * np.sqrt(var)
    if method != "skew":
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, not {method!r}")
    if unbiased_var is None or df_denominator is None:
        raise ValueError("the skewness-corrected interval needs unbiased_var and df_denominator")
    a = _skewness(np.where(np.isfinite(k3), k3, 0.0), var)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = unbiased_var**2 / df_denominator
    q = np.where(np.isfinite(df) & (df > 0), stats.t.ppf(0.5 + ci_level / 2, df), 0.0)
    q = np.where(q > 0, q, z_value(ci_level))
    se = np.sqrt(unbiased_var)
    return estimate - hall_inverse(q, a) * se, estimate - hall_inverse(-q, a) * se


def _skewness(k3: np.ndarray, var: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var > 0, k3 / var**1.5, 0.0)


def stratum_estimates(
    m: pd.DataFrame, ci_level: float, lam: float | None = None, method: str = "skew"
) -> pd.DataFrame:
    """PPI++ per stratum, one row per row of ``m`` (which holds ``MOMENTS``).

    ``lam``: None tunes lambda per stratum (PPI++); a number in [0, 1] fixes it.
    ``method``: the interval, "skew" (Hall's, needs ``THIRD_MOMENTS``) or "wald".
    Adds ppi_lambda, estimate, std_error, ci_low, ci_high, classical_estimate,
    classical_std_error, classical_ci_low, classical_ci_high, third_cumulant and
    classical_third_cumulant (of the two estimators), judge_mean (of all n + N judge
    scores), n_units and stratum_note (why a stratum has no estimate, or why its lambda is 0).
    """
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError(f"lambda must be in [0, 1] or tuned (empty), not {lam!r}")
    z_value(ci_level)  # refuses a ci_level outside (0, 1) before any work
    needed = MOMENTS + (THIRD_MOMENTS if method == "skew" else ())
    missing = [c for c in needed if c not in m.columns]
    if missing:
        raise ValueError(f"moments missing: {', '.join(missing)}")
    out = m.copy()
    n = out["n_labelled"].to_numpy(dtype=float)
    big_n = out["n_unlabelled"].to_numpy(dtype=float)
    my, mh, mu = (out[c].to_numpy(dtype=float) for c in ("mean_y", "mean_yhat_labelled",
                                                          "mean_yhat_unlabelled"))  # fmt: skip
    vy, vh, vu, cyh = (
        out[c].to_numpy(dtype=float)
        for c in ("var_y", "var_yhat_labelled", "var_yhat_unlabelled", "cov_y_yhat")
    )
    total = n + big_n
    estimable = n >= MIN_LABELLED
    use_unlabelled = estimable & (big_n >= MIN_UNLABELLED)
    with np.errstate(divide="ignore", invalid="ignore"):
        # the sample variance (ddof 1) of all n + N judge scores, from the two groups
        grand = (n * mh + big_n * np.where(big_n > 0, mu, 0.0)) / total
        ss = n * (vh + (mh - grand) ** 2) + big_n * (
            np.where(big_n > 0, vu, 0.0) + (np.where(big_n > 0, mu, 0.0) - grand) ** 2
        )
        s2 = ss / (total - 1)
        if lam is None:
            tuned = np.clip(cyh / ((1 + n / big_n) * s2), 0.0, 1.0)
            lam_k = np.where(use_unlabelled & (s2 > 0), tuned, 0.0)
        else:
            lam_k = np.where(use_unlabelled, float(lam), 0.0)
        imputed = np.where(lam_k > 0, lam_k * (mu - mh), 0.0)
        estimate = my + imputed
        var_rectifier = vy + lam_k**2 * vh - 2 * lam_k * cyh  # population variance
        var_unlabelled = np.where(lam_k > 0, lam_k**2 * vu, 0.0)
        var = var_rectifier / n + np.where(lam_k > 0, var_unlabelled / big_n, 0.0)
        classical_var = vy / n
        # the interval's unbiased variances (divisor n - 1) and their Welch-Satterthwaite
        # denominators, v^2 / (n - 1) per independent part
        iv_lab = np.clip(var_rectifier, 0.0, None) / (n - 1)
        iv_unl = np.where(lam_k > 0, var_unlabelled / (big_n - 1), 0.0)
        out["interval_variance"] = iv_lab + iv_unl
        out["interval_df_denominator"] = iv_lab**2 / (n - 1) + np.where(
            lam_k > 0, iv_unl**2 / (big_n - 1), 0.0
        )
        out["classical_interval_variance"] = vy / (n - 1)
        out["classical_interval_df_denominator"] = (vy / (n - 1)) ** 2 / (n - 1)
        judge_mean = (n * np.nan_to_num(mh) + big_n * np.nan_to_num(mu)) / total
        if method == "skew":  # third cumulants of the two estimators
            m3 = {c: out[c].to_numpy(dtype=float) for c in THIRD_MOMENTS}
            m3_rectifier = (
                m3["m3_y"]
                - 3 * lam_k * m3["m3_y_y_yhat"]
                + 3 * lam_k**2 * m3["m3_y_yhat_yhat"]
                - lam_k**3 * m3["m3_yhat_labelled"]
            )
            k3 = m3_rectifier / n**2 + np.where(
                lam_k > 0, lam_k**3 * m3["m3_yhat_unlabelled"] / big_n**2, 0.0
            )
            classical_k3 = m3["m3_y"] / n**2
        else:
            k3 = classical_k3 = np.zeros(len(out))
    var = np.clip(var, 0.0, None)  # rounding can leave -1e-18 where Y = lambda Yhat exactly
    se = np.where(estimable, np.sqrt(var), np.nan)
    estimate = np.where(estimable, estimate, np.nan)
    out["ppi_lambda"] = np.where(estimable, lam_k, np.nan)
    out["estimate"] = estimate
    out["std_error"] = se
    out["third_cumulant"] = np.where(estimable, k3, np.nan)
    out["classical_estimate"] = np.where(estimable, my, np.nan)
    out["classical_std_error"] = np.where(estimable, np.sqrt(classical_var), np.nan)
    out["classical_third_cumulant"] = np.where(estimable, classical_k3, np.nan)
    for prefix in ("", "classical_"):
        est_, var_ = out[f"{prefix}estimate"].to_numpy(), out[f"{prefix}std_error"] ** 2
        out[f"{prefix}ci_low"], out[f"{prefix}ci_high"] = interval(
            est_, var_.to_numpy(), out[f"{prefix}third_cumulant"].to_numpy(), ci_level, method,
            out[f"{prefix}interval_variance"].to_numpy(),
            out[f"{prefix}interval_df_denominator"].to_numpy(),
        )  # fmt: skip
    out["judge_mean"] = np.where(total > 0, judge_mean, np.nan)
    out["n_units"] = total.astype(np.int64)
    note = np.full(len(out), "", dtype=object)
    note[~estimable] = "fewer than 2 human labels: not estimable"
    note[estimable & (big_n < MIN_UNLABELLED)] = (
        "fewer than 2 units without a human label: lambda 0, the human-only mean"
    )
    note[use_unlabelled & ~(s2 > 0)] = "the judge gives every unit one score: lambda 0"
    out["stratum_note"] = note
    return out


def combine(
    strata: pd.DataFrame,
    keys: list[str],
    ci_level: float,
    method: str = "skew",
    cross: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Strata of each ``keys`` group (rows of ``stratum_estimates`` with a ``stratum``
    column) combined with weights n_units_k / n_units: one row per group.

    ``cross``: the ``ppi_clusters.CROSS_SUMS`` per ``keys`` x stratum_a x stratum_b of
    groups whose strata share completions (int_ppi_stratum_cross_moments); their
    covariances join the variance (``ppi_clusters``). None: the strata are independent.

    A group with a stratum that has no estimate gets none (its estimand includes that
    stratum's units), and ``notes`` names the stratum. Columns: estimate, std_error,
    ci_low, ci_high, the same four for the classical (human-only, stratified with the
    same weights) estimate, judge_mean, skewness (of the PPI estimator: the
    interval's correction, 0 for Wald), ess_gain (classical variance / PPI variance),
    effective_sample_size (n_labelled * ess_gain: the human labels the classical
    estimate would need for the PPI interval), counts, n_strata, lambda_min,
    lambda_max, strata (each stratum's weight and lambda, as text) and notes.
    """
    z_value(ci_level)  # refuses a ci_level outside (0, 1) before any work
    df = strata.sort_values([*keys, "stratum"]).reset_index(drop=True)
    df["weight"] = df["n_units"] / df.groupby(keys, sort=False)["n_units"].transform("sum")
    w = df["weight"]
    parts = pd.DataFrame(
        {
            "w_est": w * df["estimate"],
            "w2_var": w**2 * df["std_error"] ** 2,
            "w_cls": w * df["classical_estimate"],
            "w2_cls_var": w**2 * df["classical_std_error"] ** 2,
            "w3_k3": w**3 * df["third_cumulant"],
            "w3_cls_k3": w**3 * df["classical_third_cumulant"],
            "w2_iv": w**2 * df["interval_variance"],
            "w4_ivd": w**4 * df["interval_df_denominator"],
            "w2_cls_iv": w**2 * df["classical_interval_variance"],
            "w4_cls_ivd": w**4 * df["classical_interval_df_denominator"],
            "w_judge": w * df["judge_mean"],
            "missing": df["estimate"].isna().astype(int),
        }
    )
    for k in keys:
        parts[k] = df[k]
    g = parts.groupby(keys, sort=True, dropna=False)
    out = g[[c for c in parts.columns if c not in keys]].sum()
    counts = df.groupby(keys, sort=True, dropna=False).agg(
        n_labelled=("n_labelled", "sum"),
        n_unlabelled=("n_unlabelled", "sum"),
        n_units=("n_units", "sum"),
        n_strata=("stratum", "size"),
        lambda_min=("ppi_lambda", "min"),
        lambda_max=("ppi_lambda", "max"),
    )
    df["_text"] = [
        f"{s} (w {wt:.3f}, lambda {lm:.3f})" if lm == lm else f"{s} (w {wt:.3f}, no estimate)"
        for s, wt, lm in zip(df["stratum"], df["weight"], df["ppi_lambda"], strict=True)
    ]
    strata_text = df.groupby(keys, sort=True, dropna=False)["_text"].agg("; ".join)
    noted = df[df["stratum_note"] != ""]
    notes = (  # one sentence per reason, naming its strata
        noted.groupby([*keys, "stratum_note"], sort=True, dropna=False)["stratum"]
        .agg(lambda s: ", ".join(f"[{x}]" for x in s))
        .reset_index()
    )
    n_noted = noted.groupby([*keys, "stratum_note"], sort=True, dropna=False).size().to_numpy()
    n_all = (
        notes[keys]
        .merge(
            df.groupby(keys, dropna=False).size().rename("n").reset_index(), on=keys, how="left"
        )["n"]
        .to_numpy()
    )
    where = np.where(n_noted == n_all, "every stratum", notes["stratum"].to_numpy())
    notes["_note"] = notes["stratum_note"] + " in " + where
    texts = pd.DataFrame({"strata": strata_text}).join(
        notes.groupby(keys, sort=True, dropna=False)["_note"].agg("; ".join).rename("notes")
    )
    texts["notes"] = texts["notes"].fillna("")
    out = out.join(counts).join(texts)
    _add_cross_terms(out, df, keys, cross)
    ok = out["missing"] == 0
    est = out["w_est"].where(ok)
    se = np.sqrt(out["w2_var"]).where(ok)
    cls = out["w_cls"].where(ok)
    cls_se = np.sqrt(out["w2_cls_var"]).where(ok)
    skew = pd.Series(_skewness(out["w3_k3"].to_numpy(), out["w2_var"].to_numpy()), out.index)
    low, high = interval(
        est.to_numpy(), out["w2_var"].to_numpy(), out["w3_k3"].to_numpy(), ci_level, method,
        out["w2_iv"].to_numpy(), out["w4_ivd"].to_numpy(),
    )  # fmt: skip
    c_low, c_high = interval(
        cls.to_numpy(), out["w2_cls_var"].to_numpy(), out["w3_cls_k3"].to_numpy(), ci_level,
        method, out["w2_cls_iv"].to_numpy(), out["w4_cls_ivd"].to_numpy(),
    )  # fmt: skip
    result = pd.DataFrame(
        {
            "estimate": est,
            "std_error": se,
            "ci_low": low,
            "ci_high": high,
            "classical_estimate": cls,
            "classical_std_error": cls_se,
            "classical_ci_low": c_low,
            "classical_ci_high": c_high,
            "judge_mean": out["w_judge"],
            "skewness": skew.where(ok),
        },
        index=out.index,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = out["w2_cls_var"] / out["w2_var"]
    result["ess_gain"] = gain.where(ok & (out["w2_var"] > 0))
    result["effective_sample_size"] = out["n_labelled"] * result["ess_gain"]
    for c in ("n_labelled", "n_unlabelled", "n_units", "n_strata"):
        result[c] = out[c].astype(np.int64)
    for c in ("lambda_min", "lambda_max", "strata", "notes"):
        result[c] = out[c]
    return result.reset_index()


def _add_cross_terms(
    out: pd.DataFrame, strata: pd.DataFrame, keys: list[str], cross: pd.DataFrame | None
) -> None:
    """Adds to ``out``'s summed parts the covariances of strata sharing completions
    (``ppi_clusters``): the variances take them as they are; the third cumulants and
    the Welch-Satterthwaite denominators are scaled by the design effect."""
    if cross is None or cross.empty:
        return
    terms = pair_terms(strata, cross, keys).set_index(keys).reindex(out.index).fillna(0.0)
    for prefix, part in (("", ""), ("cls_", "cls_")):
        var_i, iv_i = out[f"w2_{prefix}var"].to_numpy(), out[f"w2_{prefix}iv"].to_numpy()
        var = np.clip(var_i + terms[f"cross_{part}var"].to_numpy(), 0.0, None)
        iv = np.clip(iv_i + terms[f"cross_{part}iv"].to_numpy(), 0.0, None)
        deff = design_effect(var, var_i)
        with np.errstate(divide="ignore", invalid="ignore"):
            iv_ratio = np.where(iv_i > 0, iv / iv_i, 1.0)
        out[f"w2_{prefix}var"], out[f"w2_{prefix}iv"] = var, iv
        out[f"w3_{prefix}k3"] = out[f"w3_{prefix}k3"] * deff**2  # skewness x sqrt(deff)
        out[f"w4_{prefix}ivd"] = out[f"w4_{prefix}ivd"] * deff * iv_ratio**2  # df / deff
