"""The dbt side of the GLMs: read the count tables, run every fit, return the
long result table with a fixed set of columns (the marts select from it)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable

import numpy as np
import pandas as pd

from judge_bias.errors import SettingError
from judge_bias.glm.agreement import unit_sample
from judge_bias.glm.runner import AGREEMENT_MODELS, GlmConfig, Inputs, fit_bytes, run_glms
from judge_bias.limits import duckdb_memory_limit, duckdb_threads
from judge_bias.warehouse.frames import distinct_keys, sql_literal, to_pandas

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


def not_built(table: str, n_ratings: int, config: GlmConfig) -> SettingError:
    """The error of a GLM input table built empty (macros/glm.sql's
    glm_input_needed: no model that reads it was asked for when it was built)
    read by fits asked for now (int_glm_item_counts, the only table it gates)."""
    asked = ",".join(config.models)
    return SettingError(
        f"{table} has no rows while int_glm_rating_counts counts {n_ratings} ratings: "
        f"it was built without the models that read it (glm_input_needed), and now "
        f"glm_models is {asked}. Build it with the same glm_models: "
        f"--vars '{{glm_models: {asked}}}' or JUDGE_BIAS_GLM_MODELS={asked} for the "
        f"whole build (or dbt build --select {table}+ with them)"
    )


def read_item_counts(
    relation, config: GlmConfig, n_ratings: int = 0
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The item model's count cells, read only when it is requested and its fit
    on every dimension fits the memory budget (counted from the distinct keys
    first: on 10M ratings the table has 11.7M rows and the fit would need
    about 100 GB); else an empty table and the skip note per dimension. The
    table is built empty when items is not asked for: read then with
    ``n_ratings`` (the rating counts' total) above 0, an error says so; and so
    does a table read whose counts do not total ``n_ratings`` (stale cells)."""
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
    counts = to_pandas(relation)
    total = int(counts["n"].sum()) if len(counts) else 0
    if n_ratings and total != n_ratings:
        asked = ",".join(config.models)
        raise SettingError(
            f"int_glm_item_counts counts {total} ratings while int_glm_rating_counts counts "
            f"{n_ratings}: its cells are stale (an incremental warehouse whose item cells a "
            f"load did not keep). Rebuild it: judge-bias build --full-refresh, or dbt build "
            f"--full-refresh --select int_glm_item_counts+ with glm_models {asked}"
        )
    return counts, skipped


# the agreement's rows from int_glm_ratings (on-scale ratings, a row per rating): the
# units' keys (prompt x model) as one string, as the agreement names them
UNIT = "prompt_id || '|' || model"
# every (dimension, unit) with an on-scale rating: the distinct (prompt, model)
# pairs first (10M ratings: 1.7M), then their unit strings, distinct again (a
# prompt or model holding "|" could make two pairs one unit, as unit_sample sees them)
DISTINCT_UNITS_SQL = f"""
select distinct dimension, {UNIT} as unit
from (select distinct dimension, prompt_id, model from {{ratings}} where on_scale)
"""
UNIT_COUNTS_SQL = "select dimension, count(*) as n_units from {units} group by dimension"
# the units at the sampled positions of each dimension's units in text order (the
# order np.sort gives Python strings: code points, as DuckDB's and Spark's binary
# string order)
UNITS_AT_SQL = """
select dimension, unit from (
    select
        dimension,
        unit,
        row_number() over (partition by dimension order by unit) - 1 as position
    from {units}
)
where {positions}
"""


def _literals(values, spark: bool = False) -> str:
    """SQL string literals (review18a: on Spark a backslash escaped too, or units
    holding one were sampled but never pulled, silently)."""
    return ", ".join(sql_literal(v, spark) for v in values)


def _positions(counts: pd.DataFrame, max_units: int, seed: int, spark: bool = False) -> str:
    """The SQL condition on (dimension, position) of unit_sample's units, from each
    dimension's count of units: numpy's choice without replacement draws the same
    positions from ``n`` as from an array of ``n`` (tests/test_glm_agreement_rows.py)."""
    conditions = []
    for dimension, n in sorted(zip(counts["dimension"], counts["n_units"], strict=True)):
        condition = f"dimension = {_literals([dimension], spark)}"
        if n > max_units:
            rng = np.random.default_rng(seed)
            picks = np.sort(rng.choice(int(n), size=max_units, replace=False))
            condition += f" and position in ({', '.join(str(int(i)) for i in picks)})"
        conditions.append(f"({condition})")
    return " or ".join(conditions) or "false"


def _threads() -> dict[str, str | bool | int | float | list[str]]:
    """DuckDB's threads of the build (JUDGE_BIAS_DUCKDB_THREADS) as a connection
    config, or none: DuckDB's default."""
    threads = duckdb_threads()
    return {"threads": int(threads)} if threads else {}


def sampled_units(ratings, max_units: int, seed: int) -> pd.DataFrame:
    """unit_sample's (dimension, unit) pairs of ``ratings`` (int_glm_ratings), without
    sorting every unit in Python: the units are counted per dimension and, when over
    ``max_units``, those at the positions unit_sample draws are found in SQL. On
    DuckDB the distinct units are computed once, as Arrow, and counted and ranked by
    a private in-memory DuckDB (10M ratings: 833k units per dimension, 2 CPU s
    against 3.7 for two passes over the view); on Spark two queries. Before issue 34
    they were pulled into pandas and sorted by numpy, from a table of 11.7M rows."""
    name = f"__judge_bias_glm_units_{uuid.uuid4().hex}"  # review17d: not a catalog name
    if hasattr(ratings, "toPandas"):  # Spark (Databricks)
        ratings.createOrReplaceTempView(name)
        try:
            units = f"({DISTINCT_UNITS_SQL.format(ratings=name)})"
            counts = ratings.sparkSession.sql(UNIT_COUNTS_SQL.format(units=units)).toPandas()
            where = _positions(counts, max_units, seed, spark=True)
            sql = UNITS_AT_SQL.format(units=units, positions=where)
            picked = ratings.sparkSession.sql(sql).toPandas()
        finally:
            ratings.sparkSession.catalog.dropTempView(name)
    else:
        import duckdb

        table = ratings.query(name, DISTINCT_UNITS_SQL.format(ratings=name)).to_arrow_table()
        # the build's memory limit (JUDGE_BIAS_DUCKDB_MEMORY), not DuckDB's default
        # of 80% of the machine, and a spill folder removed after it (review18a); the
        # build's threads when set (JUDGE_BIAS_DUCKDB_THREADS: one in its second phase)
        with (
            tempfile.TemporaryDirectory(prefix="judge-bias-glm-") as spill,
            duckdb.connect(
                config={"memory_limit": duckdb_memory_limit(), "temp_directory": spill} | _threads()
            ) as con,
        ):
            con.register(name, table)
            counts = con.sql(UNIT_COUNTS_SQL.format(units=name)).df()
            where = _positions(counts, max_units, seed)
            picked = con.sql(UNITS_AT_SQL.format(units=name, positions=where)).df()
    if picked.empty:
        return unit_sample(pd.DataFrame({"dimension": [], "unit": []}), max_units, seed)
    return picked.sort_values(["dimension", "unit"], ignore_index=True)


def agreement_rows(ratings, config: GlmConfig) -> pd.DataFrame:
    """The GLM agreement's rows: one on-scale rating per dimension, grader and unit
    (prompt x model; the first run in run_id order, rows tied on run_id in
    grader_type then score order), of the at most agreement_max_units units per
    dimension it reads (unit_sample), from ``ratings`` (int_glm_ratings). Only the
    sampled units' ratings are pulled (at 10M ratings 2 x 2,000 units, about 28k
    rows) and deduplicated here; the table of every unit's rows the SQL built
    before (int_glm_agreement_ratings, 11.7M rows) is gone (issue 34). Sorted (SQL
    gives no order). Nothing is read when no model the agreement reads
    (AGREEMENT_MODELS) is asked for."""
    if not any(m in AGREEMENT_MODELS for m in config.models):
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    keep = sampled_units(ratings, config.agreement_max_units, config.settings.seed)
    if keep.empty:
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    picked = _literals(keep["unit"].unique(), spark=hasattr(ratings, "toPandas"))
    rows = to_pandas(ratings.filter(f"on_scale and {UNIT} in ({picked})"))
    rows["item"] = rows["prompt_id"]
    rows["unit"] = rows["prompt_id"] + "|" + rows["model"]
    first = ["dimension", "grader", "unit", "run_id", "grader_type", "score"]
    # prompt and model last: two pairs of one unit string ("a|b" + "c", "a" + "b|c")
    # tied on the rest keep the same row whatever order the engine returned
    rows = rows.sort_values([*first, "prompt_id", "model"], kind="stable")
    rows = rows.drop_duplicates(first[:3])
    rows = rows.merge(keep, on=["dimension", "unit"])  # a unit kept in one dimension only
    return rows[AGREEMENT_COLUMNS].sort_values(first[:4], kind="stable").reset_index(drop=True)


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
        agreement_rows=agreement_rows(ref("int_glm_ratings"), config),
        excluded=to_pandas(ref("int_glm_excluded")),
    )
    return shaped(run_glms(inputs, config), config.settings.ci_level)
