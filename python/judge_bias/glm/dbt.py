"""The dbt side of the GLMs: read the count tables, run every fit, return the
long result table with a fixed set of columns (the marts select from it)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.errors import SettingError
from judge_bias.glm.agreement import unit_sample
from judge_bias.glm.runner import AGREEMENT_MODELS, GlmConfig, Inputs, fit_bytes, run_glms
from judge_bias.warehouse.frames import distinct_keys, rows_where_in, to_pandas

ITEM_COUNT_COLUMNS = ["dimension", "grader", "grader_type", "model", "item", "score", "n"]
AGREEMENT_COLUMNS = [
    "dimension",
    "grader",
    "grader_type",
    "model",
    "item",
    "unit",
    "score",
    "run_id",
]

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
    "n_ratings": "Int64", "level": "string", "draw": "Int64", "alpha": "float64",
    "ci_level": "float64",
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


# the GLM input tables built empty unless a fit reads them (macros/glm.sql)
GATED_INPUTS = ("int_glm_item_counts", "int_glm_agreement_ratings")


def not_built(table: str, n_ratings: int, config: GlmConfig) -> SettingError:
    """The error of a GLM input table built empty (macros/glm.sql's
    glm_input_needed: no model that reads it was asked for when it was built)
    read by fits asked for now."""
    asked = ",".join(config.models)
    # both tables glm_input_needed gates are named in the select: when both were
    # built empty, rebuilding the one named first would only move the error
    rebuild = " ".join(f"{name}+" for name in GATED_INPUTS)
    return SettingError(
        f"{table} has no rows while int_glm_rating_counts counts {n_ratings} ratings: "
        f"it was built without the models that read it (glm_input_needed), and now "
        f"glm_models is {asked}. Build it with the same glm_models: "
        f"--vars '{{glm_models: {asked}}}' or JUDGE_BIAS_GLM_MODELS={asked} for the "
        f"whole build (or dbt build --select {rebuild} with them)"
    )


def read_item_counts(
    relation, config: GlmConfig, n_ratings: int = 0
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The item model's count cells, read only when it is requested and its fit
    on every dimension fits the memory budget (counted from the distinct keys
    first: on 10M ratings the table has 11.7M rows and the fit would need
    about 100 GB); else an empty table and the skip note per dimension. The
    table is built empty when items is not asked for: read then with
    ``n_ratings`` (the rating counts' total) above 0, an error says so."""
    empty = pd.DataFrame(columns=ITEM_COUNT_COLUMNS)
    if "items" not in config.models:
        return empty, {}
    keys = distinct_keys(relation, "dimension, item")
    if keys.empty and n_ratings:
        raise not_built("int_glm_item_counts", n_ratings, config)
    items = keys.groupby("dimension").size()
    graders = distinct_keys(relation, "dimension, grader").groupby("dimension").size()
    skipped = {}
    for dimension, n_items in items.items():
        needed = fit_bytes("items", config.settings, int(graders.get(dimension, 0)), int(n_items))
        note = config.budget.over(f"the items fit on {dimension}", needed)
        if note:
            skipped[str(dimension)] = note
    if skipped and len(skipped) == len(items):
        return empty, skipped
    return to_pandas(relation), skipped


def agreement_rows(relation, config: GlmConfig, n_ratings: int = 0) -> pd.DataFrame:
    """The rows of int_glm_agreement_ratings (one rating per grader and unit,
    deduplicated in SQL) of the units the agreement reads: the unit keys are
    sampled here and only their ratings are pulled (10M ratings are 11.7M rows
    there, 2 x 2,000 units about 28k), sorted (SQL gives no order). Built empty
    when no model the agreement reads (AGREEMENT_MODELS) is asked for: an error as
    read_item_counts'."""
    if not any(m in AGREEMENT_MODELS for m in config.models):
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    units = distinct_keys(relation, "dimension, unit")
    if units.empty and n_ratings:
        raise not_built("int_glm_agreement_ratings", n_ratings, config)
    keep = unit_sample(units, config.agreement_max_units, config.settings.seed)
    rows = rows_where_in(relation, "unit", keep["unit"].unique())
    rows = rows.merge(keep, on=["dimension", "unit"])  # a unit kept in one dimension only
    return rows.sort_values(["dimension", "grader", "unit", "run_id"], kind="stable").reset_index(
        drop=True
    )


def results_from_relations(ref: Callable, get: Callable, session: object = None) -> pd.DataFrame:
    """``ref(name)`` gives a DuckDB relation or a Spark DataFrame (the small tables the
    SQL models aggregated), ``get(var)`` a dbt config value."""
    config = GlmConfig.from_vars(get)
    families = to_pandas(ref("int_glm_families"))
    rating_counts = to_pandas(ref("int_glm_rating_counts"))
    n_ratings = int(rating_counts["n"].sum()) if len(rating_counts) else 0
    item_counts, items_skipped = read_item_counts(ref("int_glm_item_counts"), config, n_ratings)
    inputs = Inputs(
        rating_counts=rating_counts,
        item_counts=item_counts,
        items_skipped=items_skipped,
        pairwise_counts=to_pandas(ref("int_glm_pairwise_counts")),
        scales=to_pandas(ref("int_glm_scale_points")),
        families=dict(zip(families["name"], families["family"], strict=True)),
        agreement_rows=agreement_rows(ref("int_glm_agreement_ratings"), config, n_ratings),
        excluded=to_pandas(ref("int_glm_excluded")),
    )
    return shaped(run_glms(inputs, config), config.settings.ci_level)
