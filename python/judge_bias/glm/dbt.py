"""The dbt side of the GLMs: read the count tables, run every fit, return the
long result table with a fixed set of columns (the marts select from it)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.glm.runner import GlmConfig, Inputs, run_glms
from judge_bias.warehouse.frames import to_pandas

# every column of int_glm_results, whatever ran, so the marts' selects hold
RESULT_COLUMNS: dict[str, str] = {
    "output": "string", "model": "string", "dimension": "string",
    "parameter": "string", "term_type": "string", "grader": "string",
    "rated_model": "string", "grader_type": "string", "family": "string",
    "item": "string", "pair": "string", "cutpoint": "string",
    "mean": "float64", "sd": "float64", "hdi_low": "float64", "hdi_high": "float64",
    "mcse": "float64", "ess_bulk": "float64", "ess_tail": "float64", "r_hat": "float64",
    "prob_positive": "float64", "fit_status": "string",
    "n_obs": "Int64", "n_cells": "Int64", "draws": "Int64", "warmup": "Int64",
    "chains": "Int64", "seed": "Int64", "target_accept": "float64",
    "divergences": "Int64", "bfmi_min": "float64", "r_hat_max": "float64",
    "ess_bulk_min": "float64", "ess_tail_min": "float64", "status": "string",
    "notes": "string", "seconds": "float64", "sampling_seconds": "float64",
    "family_of_models": "string", "elpd_loo": "float64", "se_loo": "float64",
    "p_loo": "float64", "pareto_k_max": "float64", "pareto_k_bad": "Int64",
    "pareto_k_limit": "float64", "elpd_waic": "float64", "se_waic": "float64",
    "p_waic": "float64", "rank": "Int64", "d_elpd": "float64", "se_d_elpd": "float64",
    "preferred": "boolean",
    "kind": "string", "q05": "float64", "q25": "float64", "q50": "float64",
    "q75": "float64", "q95": "float64", "n_draws": "Int64", "n_units": "Int64",
    "n_ratings": "Int64", "level": "string", "ci_level": "float64",
}  # fmt: skip


def shaped(result: pd.DataFrame, ci_level: float) -> pd.DataFrame:
    out = result.reindex(columns=list(RESULT_COLUMNS))
    out["ci_level"] = ci_level
    for column, dtype in RESULT_COLUMNS.items():
        if dtype == "Int64":
            out[column] = pd.to_numeric(out[column]).round().astype("Int64")
        else:
            out[column] = out[column].astype(dtype)
    return out


def results_from_relations(ref: Callable, get: Callable) -> pd.DataFrame:
    """``ref(name)`` gives a DuckDB relation or a Spark DataFrame (the small tables the
    SQL models aggregated), ``get(var)`` a dbt config value."""
    config = GlmConfig.from_vars(get)
    families = to_pandas(ref("int_glm_families"))
    # one rating per coder and unit, deduplicated in SQL; sorted here (SQL gives no
    # order) because the agreement samples units in order of appearance
    agreement_rows = (
        to_pandas(ref("int_glm_agreement_ratings"))
        .sort_values(["dimension", "grader", "unit", "run_id"], kind="stable")
        .reset_index(drop=True)
    )
    inputs = Inputs(
        rating_counts=to_pandas(ref("int_glm_rating_counts")),
        item_counts=to_pandas(ref("int_glm_item_counts")),
        pairwise_counts=to_pandas(ref("int_glm_pairwise_counts")),
        scales=to_pandas(ref("int_glm_scale_points")),
        families=dict(zip(families["name"], families["family"], strict=True)),
        agreement_rows=agreement_rows,
        excluded=to_pandas(ref("int_glm_excluded")),
    )
    return shaped(run_glms(inputs, config), config.settings.ci_level)
