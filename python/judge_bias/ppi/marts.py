"""The two PPI marts, ppi_model_scores and ppi_model_score_strata, from the stratum
moments of int_ppi_stratum_moments and, for the rows pooling the dimensions, the
cross moments of strata sharing completions (int_ppi_stratum_cross_moments; the
estimator: judge_bias.ppi.estimator and ppi_clusters)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from judge_bias.ppi.estimator import combine, stratum_estimates
from judge_bias.ppi.settings import settings_from_config

KEYS = ["judge", "is_panel", "model", "dimension"]
SCORE_COLUMNS: dict[str, str] = {
    "judge": "object",
    "is_panel": "bool",
    "model": "object",
    "dimension": "object",
    "estimate": "float64",
    "std_error": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
    "classical_estimate": "float64",
    "classical_std_error": "float64",
    "classical_ci_low": "float64",
    "classical_ci_high": "float64",
    "skewness": "float64",
    "judge_mean": "float64",
    "judge_minus_estimate": "float64",
    "ess_gain": "float64",
    "effective_sample_size": "float64",
    "n_labelled": "Int64",
    "n_unlabelled": "Int64",
    "n_units": "Int64",
    "n_human_na": "Int64",
    "n_judge_na": "Int64",
    "n_strata": "Int64",
    "lambda_min": "float64",
    "lambda_max": "float64",
    "strata": "object",
    "method": "object",
    "variance_method": "object",
    "ci_level": "float64",
    "notes": "object",
}
STRATUM_COLUMNS: dict[str, str] = {
    **{k: SCORE_COLUMNS[k] for k in KEYS},
    "stratum": "object",
    "weight": "float64",
    "ppi_lambda": "float64",
    "n_labelled": "Int64",
    "n_unlabelled": "Int64",
    "n_human_na": "Int64",
    "n_judge_na": "Int64",
    **{c: "float64" for c in ("estimate", "std_error", "ci_low", "ci_high")},
    "classical_estimate": "float64",
    "classical_std_error": "float64",
    "classical_ci_low": "float64",
    "classical_ci_high": "float64",
    "judge_mean": "float64",
    "ci_level": "float64",
    "notes": "object",
}
# bytes per moments row pulled into pandas: 24 values, 80 bytes each (limits.py)
MOMENT_ROW_BYTES = 24 * 80
CROSS_ROW_BYTES = 16 * 80  # 16 values a cross-moments row
VARIANCE_CLUSTERED = "completion-clustered: strata sharing completions covary"
VARIANCE_INDEPENDENT = "strata independent: one unit per completion"
SCALE = (0.0, 1.0)  # the estimand is a mean of normalised scores: no interval leaves it


def method_name(lam: float | None, method: str = "skew") -> str:
    if lam is None:
        name = "stratified PPI++ (lambda tuned per stratum)"
    elif lam == 0:
        name = "stratified human-only mean (lambda 0)"
    else:
        name = f"stratified PPI (lambda fixed at {lam:g})"
    ends = "Hall's skewness-corrected" if method == "skew" else "Wald"
    return f"{name}, {ends} interval"


def _clip_to_scale(table: pd.DataFrame, columns: tuple[str, ...]) -> None:
    for c in columns:
        table[c] = table[c].clip(*SCALE)


def mart(
    grain: str, moments: object, config: Callable[[str], object], cross: object = None
) -> pd.DataFrame:
    """The body of the two PPI dbt models: ``grain`` "scores" (ppi_model_scores) or
    "strata" (ppi_model_score_strata), from the int_ppi_stratum_moments and
    int_ppi_stratum_cross_moments relations within the memory budget; ``config``
    reads the model's config keys."""
    from judge_bias.limits import within_budget

    settings = settings_from_config(config)
    budget, ci_level = settings.budget, settings.ci_level
    lam, method = settings.ppi_lambda, settings.ppi_interval
    if cross is None:
        raise ValueError("the PPI marts need the cross moments (int_ppi_stratum_cross_moments)")
    table, keys, columns = {
        "scores": (score_table, KEYS, SCORE_COLUMNS),
        "strata": (stratum_table, [*KEYS, "stratum"], STRATUM_COLUMNS),
    }[grain]
    return within_budget(
        moments, budget, "stratum moments", MOMENT_ROW_BYTES,
        lambda m: within_budget(
            cross, budget, "stratum cross moments", CROSS_ROW_BYTES,
            lambda c: table(m, ci_level, lam, method, c), ", ".join(keys), columns,
            keys_relation=moments,
        ), ", ".join(keys), columns,
    )  # fmt: skip


def stratum_table(
    m: pd.DataFrame,
    ci_level: float,
    lam: float | None,
    method: str = "skew",
    cross: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Rows of int_ppi_stratum_moments with each stratum's PPI++ estimate, weight and
    lambda. A stratum with no usable unit (only NA labels or NA judge scores) keeps
    its counts and has no estimate nor weight. A stratum holding several units of a
    completion (a row pooling the dimensions with ppi_strata leaving dimension out)
    takes their covariances from ``cross``, as the pooled rows do."""
    est = stratum_estimates(m, ci_level, lam, method)
    within = _within_stratum(est, cross, ci_level, method)
    if within is not None:
        est = est.set_index([*KEYS, "stratum"])
        est.update(within)
        est = est.reset_index()
    _clip_to_scale(est, ("ci_low", "ci_high", "classical_ci_low", "classical_ci_high"))
    usable = est["n_units"] > 0
    est.loc[~usable, "stratum_note"] = "no unit with a judge score and a known label status"
    totals = est[usable].groupby(KEYS, sort=False)["n_units"].transform("sum")
    est["weight"] = (est["n_units"] / totals).where(usable)
    est["notes"] = est["stratum_note"].replace("", None)
    est["ci_level"] = ci_level
    return est.reindex(columns=list(STRATUM_COLUMNS)).astype(STRATUM_COLUMNS)


def _within_stratum(
    est: pd.DataFrame, cross: pd.DataFrame | None, ci_level: float, method: str
) -> pd.DataFrame | None:
    """The strata with pairs of units of one completion inside them, each combined
    alone (weight 1) with those pairs' covariances: their std_error and interval."""
    if cross is None:
        return None
    same = cross[cross["stratum_a"] == cross["stratum_b"]]
    if same.empty:
        return None
    keys = [*KEYS, "_stratum"]
    has = est.merge(same[[*KEYS, "stratum_a"]].drop_duplicates(),
                    left_on=[*KEYS, "stratum"], right_on=[*KEYS, "stratum_a"])  # fmt: skip
    alone = combine(
        has.drop(columns="stratum_a").assign(_stratum=has["stratum"]), keys, ci_level, method,
        same.assign(_stratum=same["stratum_a"]),
    )  # fmt: skip
    columns = ["std_error", "ci_low", "ci_high", "classical_std_error", "classical_ci_low",
               "classical_ci_high"]  # fmt: skip
    return alone.rename(columns={"_stratum": "stratum"}).set_index([*KEYS, "stratum"])[columns]


def score_table(
    m: pd.DataFrame,
    ci_level: float,
    lam: float | None,
    method: str = "skew",
    cross: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per judge (or panel) x model x dimension: the strata combined, with
    the covariances of strata that share completions (``cross``) where any."""
    est = stratum_estimates(m, ci_level, lam, method)
    usable = est[est["n_units"] > 0]
    scores = combine(usable, KEYS, ci_level, method, cross)
    _clip_to_scale(scores, ("ci_low", "ci_high", "classical_ci_low", "classical_ci_high"))
    na = est.groupby(KEYS, sort=True)[["n_human_na", "n_judge_na"]].sum().reset_index()
    scores = na.merge(scores, on=KEYS, how="left")  # a group of NA units only is kept
    scores["judge_minus_estimate"] = scores["judge_mean"] - scores["estimate"]
    scores["method"] = method_name(lam, method)
    shared = (
        pd.MultiIndex.from_frame(cross[KEYS])
        if cross is not None
        else pd.MultiIndex.from_tuples([], names=KEYS)
    )
    is_shared = pd.MultiIndex.from_frame(scores[KEYS]).isin(shared)
    scores["variance_method"] = np.where(is_shared, VARIANCE_CLUSTERED, VARIANCE_INDEPENDENT)
    scores["ci_level"] = ci_level
    no_units = scores["n_units"].isna()
    scores.loc[no_units, "notes"] = "no unit with a judge score and a known label status"
    # nothing estimated (no unit, or fewer than 2 human labels in a stratum): no
    # estimator named, as model_comparisons and a row skipped by the memory budget
    scores.loc[scores["estimate"].isna(), ["method", "variance_method"]] = None
    scores["notes"] = scores["notes"].replace("", None)
    for c in ("n_labelled", "n_unlabelled", "n_units", "n_strata"):
        scores[c] = scores[c].fillna(0)
    return scores.reindex(columns=list(SCORE_COLUMNS)).astype(SCORE_COLUMNS)


def ppi_model_scores(
    ref: Callable[[str], object], get: Callable[[str], object], session: object = None
) -> pd.DataFrame:
    """ppi_model_scores as its dbt model file calls it."""
    return mart("scores", ref("int_ppi_stratum_moments"), get, ref("int_ppi_stratum_cross_moments"))


def ppi_model_score_strata(
    ref: Callable[[str], object], get: Callable[[str], object], session: object = None
) -> pd.DataFrame:
    """ppi_model_score_strata as its dbt model file calls it."""
    return mart("strata", ref("int_ppi_stratum_moments"), get, ref("int_ppi_stratum_cross_moments"))
