"""int_ppi_unit_pair_sums in dense linear algebra: the sums over the pairs of PPI
units of one prompt of the products of their centred scores.

Per judge (or the panel; a pair group) the units of one prompt are paired: unit
groups a < b (int_ppi_stratum_moments' rows, numbered in key order, each split by
label status into two codes) and per pair of codes the sum over prompts of unit a's
centred score times unit b's. With X the prompts x codes matrix of one centred score
(0 where the prompt has no unit of that code) and Y another's, that sum is
(X'Y)[a, b]: a unit group holds at most one unit per prompt (int_ppi_units is
unique on judge, model, prompt, dimension), so the products of X'Y are exactly the
pairs the SQL self-join made (~64M at 10M ratings), summed by BLAS instead of a hash
join. The centred scores are the SQL's (the same subtraction of the same means), so
only the order of the additions differs (~1e-16 relative); the pair counts are the
product of the presence matrices (exact integers).

The centring means come from the moments table through SQL (UNIT_GROUPS_SQL, as
int_ppi_unit_pair_sums.sql computed them before it was this Python model): the model
runs on DuckDB on both routes (on the Spark route it is a stage-2 model reading stage 1's
exported int_ppi_units). Sums that are NULL in SQL (no non-NULL product: dy of an
unlabelled unit is NULL; the models centring outside the pairs of one model) are NULL
here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

# the centrings: side -> (also dg, the judge score centred on all the row's units;
# kept for the pairs of one model only), each centring a unit on a row of
# int_ppi_stratum_moments of its judge, is_panel and stratum: own (its model x
# dimension), dimensions (its model, dimension 'all'), models (model and dimension 'all')
CENTRINGS = {"own": (True, False), "dimensions": (True, False), "models": (False, True)}
# the products (macros/ppi_pairs.sql ppi_pair_products): name -> (unit a's score, unit b's)
PRODUCTS = {"y_y": ("dy", "dy"), "y_j": ("dy", "dj"), "j_y": ("dj", "dy"), "j_j": ("dj", "dj")}
# the rows of a dense block: at most this many matrix entries per score (8 bytes each)
BLOCK_ENTRIES = 8_000_000

_MOMENTS_SIDE = {
    "own": "own_moments",
    "dimensions": "dimensions_moments",
    "models": "models_moments",
}


def _means_sql() -> str:
    parts = []
    for side, (judge_centring, _) in CENTRINGS.items():
        m = _MOMENTS_SIDE[side]
        parts += [
            f"{m}.mean_y as mean_y_{side}",
            f"{m}.mean_yhat_labelled as mean_yhat_labelled_{side}",
            f"{m}.mean_yhat_unlabelled as mean_yhat_unlabelled_{side}",
        ]
        if judge_centring:
            parts.append(
                f"(coalesce({m}.n_labelled * {m}.mean_yhat_labelled, 0)"
                f" + coalesce({m}.n_unlabelled * {m}.mean_yhat_unlabelled, 0))"
                f" / nullif({m}.n_labelled + {m}.n_unlabelled, 0) as mean_yhat_{side}"
            )
    return ",\n        ".join(parts)


# the unit groups (a row of one model of int_ppi_stratum_moments) with their key,
# pair group and the means of their three centrings' rows (int_ppi_unit_pair_sums.sql
# before it was a Python model)
UNIT_GROUPS_SQL = f"""
with moments as (
    select
        *,
        cast(row_number() over (order by judge, is_panel, model, dimension, stratum)
            as integer) as unit_key
    from ppi_moments
)
select
    own_moments.judge,
    own_moments.is_panel,
    own_moments.model,
    own_moments.dimension,
    own_moments.stratum,
    own_moments.unit_key,
    cast(dense_rank() over (order by own_moments.judge, own_moments.is_panel) as integer)
        as pair_group,
    {_means_sql()}
from moments as own_moments
inner join moments as dimensions_moments
    on
        own_moments.judge = dimensions_moments.judge
        and own_moments.is_panel = dimensions_moments.is_panel
        and own_moments.model = dimensions_moments.model
        and dimensions_moments.dimension = 'all'
        and own_moments.stratum = dimensions_moments.stratum
inner join moments as models_moments
    on
        own_moments.judge = models_moments.judge
        and own_moments.is_panel = models_moments.is_panel
        and models_moments.model = 'all'
        and models_moments.dimension = 'all'
        and own_moments.stratum = models_moments.stratum
where own_moments.model != 'all'
order by own_moments.unit_key
"""

# each estimable unit as integers: its unit key, label status and prompt number, with
# its two scores (the strings matched once in DuckDB, a hash join on a few hundred
# groups and a few hundred thousand prompts)
UNITS_SQL = """
with units as (
    select * from ppi_units where status in ('labelled', 'unlabelled')
),
prompts as (
    select
        prompt_id,
        cast(row_number() over () as integer) - 1 as prompt
    from (select distinct prompt_id from units) as distinct_prompts
)
select
    ppi_groups.unit_key,
    units.status = 'labelled' as is_labelled,
    prompts.prompt,
    units.y,
    units.yhat
from units
inner join ppi_groups
    on
        units.judge = ppi_groups.judge
        and units.is_panel = ppi_groups.is_panel
        and units.model = ppi_groups.model
        and units.dimension = ppi_groups.dimension
        and units.stratum = ppi_groups.stratum
inner join prompts on units.prompt_id = prompts.prompt_id
"""


def _columns() -> list[tuple[str, str, str, str, bool]]:
    """(output column, side, score a, score b, one model only) of every pair sum."""
    out = []
    for side, (judge_centring, one_model) in CENTRINGS.items():
        products = dict(PRODUCTS)
        if judge_centring:
            products["g_g"] = ("dg", "dg")
        for name, (a, b) in products.items():
            out.append((f"{name}_{side}", side, a, b, one_model))
    return out


def _group_sums(
    code: np.ndarray, prompt: np.ndarray, scores: dict[str, np.ndarray], n_codes: int
) -> tuple[np.ndarray, dict[tuple[str, str], np.ndarray]]:
    """The pair counts (codes x codes) and the product sums of one pair group: for
    each pair of scores (a, b) of one centring, (X_a'X_b)[code_a, code_b], X the
    prompts x codes matrix of a score (0 where the prompt has no unit of the code).

    Only the codes present are columns, and the prompts are taken in blocks of at
    most BLOCK_ENTRIES matrix entries (memory bounded; the sums add over blocks)."""
    # the codes and prompts present, numbered by counting (no sort): only they are
    # columns and rows
    present = np.flatnonzero(np.bincount(code, minlength=n_codes))
    width = len(present)
    column = (np.cumsum(np.bincount(code, minlength=n_codes) > 0) - 1)[code]
    prompts = np.bincount(prompt) > 0 if len(prompt) else np.zeros(0, dtype=bool)
    row = (np.cumsum(prompts) - 1)[prompt]
    n_rows = int(prompts.sum())
    block = max(1, BLOCK_ENTRIES // max(2 * width, 1))
    if n_rows > block:  # several blocks: the units in row order, each block a slice
        order = np.argsort(row, kind="stable")
        row, column = row[order], column[order]
        scores = {name: values[order] for name, values in scores.items()}
        bounds = np.searchsorted(row, np.arange(0, n_rows + block, block))
    else:
        bounds = np.array([0, len(row)])
    sides = {name.split("_", 1)[1] for name in scores}
    counts = np.zeros((width, width))
    # per centring, [dy | dj] stacked: one product gives y_y, y_j, j_y and j_j
    stacked = {side: np.zeros((2 * width, 2 * width)) for side in sides}
    judge = {side: np.zeros((width, width)) for side in sides if f"dg_{side}" in scores}
    # one matrix for every block and score: each score of a block is written to the
    # same entries (its units'), so only a block's entries are cleared for the next
    buffer = np.zeros((min(block, n_rows), 2 * width))
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        if lo == hi:
            continue
        r, c = row[lo:hi] - k * block, column[lo:hi]
        matrix = buffer[: min(block, n_rows - k * block)]
        matrix[r, c] = 1.0
        ones = matrix[:, :width]
        counts += ones.T @ ones
        for side in sides:
            matrix[r, c] = scores[f"dy_{side}"][lo:hi]
            matrix[r, c + width] = scores[f"dj_{side}"][lo:hi]
            stacked[side] += matrix.T @ matrix
            if side in judge:
                matrix[r, c] = scores[f"dg_{side}"][lo:hi]
                g = matrix[:, :width]
                judge[side] += g.T @ g
        matrix[r, c] = 0.0
        matrix[r, c + width] = 0.0
    full_counts = np.zeros((n_codes, n_codes))
    full_counts[np.ix_(present, present)] = counts
    sums: dict[tuple[str, str], np.ndarray] = {}
    blocks = {"dy": slice(0, width), "dj": slice(width, 2 * width)}
    for side in sides:
        for a, b in PRODUCTS.values():
            full = np.zeros((n_codes, n_codes))
            full[np.ix_(present, present)] = stacked[side][blocks[a], blocks[b]]
            sums[(f"{a}_{side}", f"{b}_{side}")] = full
        if side in judge:
            full = np.zeros((n_codes, n_codes))
            full[np.ix_(present, present)] = judge[side]
            sums[(f"dg_{side}", f"dg_{side}")] = full
    return full_counts, sums


def unit_pair_sums(units: Any, moments: Any, session: Any) -> pd.DataFrame:
    """The rows of int_ppi_unit_pair_sums from int_ppi_units and
    int_ppi_stratum_moments (DuckDB relations or pandas DataFrames; session a DuckDB
    connection)."""
    ppi_units, ppi_moments = units, moments  # noqa: F841 (read by DuckDB by name)
    groups = session.sql(UNIT_GROUPS_SQL).df()
    ppi_groups = groups  # noqa: F841
    fetched = session.sql(UNITS_SQL).fetchnumpy()
    unit_key = np.asarray(fetched["unit_key"], dtype=np.int32)
    labelled = np.asarray(fetched["is_labelled"], dtype=np.int32)
    prompt = np.asarray(fetched["prompt"], dtype=np.int32)
    y = np.ma.filled(np.ma.asarray(fetched["y"], dtype=np.float64), np.nan)
    yhat = np.ma.filled(np.ma.asarray(fetched["yhat"], dtype=np.float64), np.nan)
    if not np.isfinite(yhat).all() or not np.isfinite(y[labelled == 1]).all():
        raise ValueError(
            "int_ppi_unit_pair_sums: a labelled or unlabelled unit has a non-finite score "
            "(int_ppi_units' statuses promise a judge score, and a human score when labelled)"
        )
    mean_columns = [c for c in groups.columns if c.startswith("mean_")]
    rows = []
    for _, members in groups.groupby("pair_group", sort=True):
        keys = members["unit_key"].to_numpy()
        first, n_keys = int(keys.min()), len(keys)
        # the keys of one pair group are consecutive (numbered judge, is_panel first)
        assert (np.sort(keys) == np.arange(first, first + n_keys)).all()
        mask = (unit_key >= first) & (unit_key < first + n_keys)
        local = unit_key[mask] - first
        is_labelled = labelled[mask]
        idx = members.index.to_numpy()[np.argsort(keys)]
        scores: dict[str, np.ndarray] = {}
        y_g, yhat_g = y[mask], yhat[mask]
        means = {c: groups[c].to_numpy(dtype=np.float64)[idx][local] for c in mean_columns}
        for side, (judge_centring, _) in CENTRINGS.items():
            # dy: 0 for an unlabelled unit (its SQL NULL: no product of it is summed)
            scores[f"dy_{side}"] = np.where(is_labelled == 1, y_g - means[f"mean_y_{side}"], 0.0)
            scores[f"dj_{side}"] = yhat_g - np.where(
                is_labelled == 1,
                means[f"mean_yhat_labelled_{side}"],
                means[f"mean_yhat_unlabelled_{side}"],
            )
            if judge_centring:
                scores[f"dg_{side}"] = yhat_g - means[f"mean_yhat_{side}"]
        counts, sums = _group_sums(2 * local + is_labelled, prompt[mask], scores, 2 * n_keys)
        code_a, code_b = np.nonzero(np.triu(counts, k=1) > 0)
        if not len(code_a):
            continue
        member = groups.loc[idx]
        ga = member.iloc[code_a // 2].reset_index(drop=True)
        gb = member.iloc[code_b // 2].reset_index(drop=True)
        la, lb = (code_a % 2 == 1), (code_b % 2 == 1)
        same_model = ga["model"].to_numpy() == gb["model"].to_numpy()
        out = {
            "judge": ga["judge"],
            "is_panel": ga["is_panel"].astype(bool),
            "model_a": ga["model"],
            "dimension_a": ga["dimension"],
            "stratum_a": ga["stratum"],
            "model_b": gb["model"],
            "dimension_b": gb["dimension"],
            "stratum_b": gb["stratum"],
            "is_labelled_a": la,
            "is_labelled_b": lb,
            "n_pairs": counts[code_a, code_b].round().astype(np.int64),
        }
        for column, side, a, b, one_model in _columns():
            values = sums[(f"{a}_{side}", f"{b}_{side}")][code_a, code_b]
            valid = np.ones(len(values), dtype=bool)
            if a == "dy":
                valid &= la
            if b == "dy":
                valid &= lb
            if one_model:
                valid &= same_model
            out[column] = pd.arrays.FloatingArray(np.where(valid, values, 0.0), ~valid)
        rows.append(pd.DataFrame(out))
    if not rows:
        return _empty()
    return pd.concat(rows, ignore_index=True)


def _empty() -> pd.DataFrame:
    columns: dict[str, Any] = {
        "judge": pd.Series(dtype=object),
        "is_panel": pd.Series(dtype=bool),
        "model_a": pd.Series(dtype=object),
        "dimension_a": pd.Series(dtype=object),
        "stratum_a": pd.Series(dtype=object),
        "model_b": pd.Series(dtype=object),
        "dimension_b": pd.Series(dtype=object),
        "stratum_b": pd.Series(dtype=object),
        "is_labelled_a": pd.Series(dtype=bool),
        "is_labelled_b": pd.Series(dtype=bool),
        "n_pairs": pd.Series(dtype=np.int64),
    }
    for column, *_ in _columns():
        columns[column] = pd.Series(dtype="Float64")
    return pd.DataFrame(columns)
