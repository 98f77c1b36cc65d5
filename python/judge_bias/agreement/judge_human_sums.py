"""agreement_judge_human from sums computed by DuckDB, never one row per score pair.

Every statistic of ``judge_human.judge_human_agreement`` is a function of two small
things per judge x dimension (and per judge, the ``all`` row):

- the contingency table of (judge score, human score) with the ratings in each
  cell: Spearman, Pearson, Kendall tau-b, gamma and their Fisher intervals
  (``correlations_from_cells``), the design effects' independent-rows variance
  and the notes;
- per prompt, the sums n, x, y, x^2, y^2, xy of the scores and of their midranks
  (Spearman): a prompt's total influence T_g (``clustered_correlation``) is
  quadratic in x and y, so it is a linear function of those sums.

DuckDB computes both (the midranks from each group's margins, with window sums),
so the mart reads a few thousand cells and one row per judge x dimension x prompt
instead of the distinct score pairs (at 10M ratings 8.5M rows, the build's peak).
tests/test_agreement_cells.py checks it equals ``judge_human_agreement`` on the
pairs, which is checked against scipy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judge_bias.agreement.clustered_correlation import fisher_interval, linearised
from judge_bias.agreement.coded import parts_of
from judge_bias.agreement.correlation_notes import correlation_notes
from judge_bias.agreement.judge_human import (
    CORRELATIONS,
    JUDGE_HUMAN_COLUMNS,
    MIN_TABLE_CELLS,
    TABLE_CELL_BYTES,
    TABLE_SKIPPED,
    Z95,
    cell_margins,
    correlations_from_cells,
    frame,
)
from judge_bias.limits import Budget
from judge_bias.stats.binary_cells import as_duckdb, query

MOMENTS = ("n", "sx", "sy", "sxx", "syy", "sxy")
RANK_MOMENTS = ("n", "rx", "ry", "rxx", "ryy", "rxy")
# bytes per row of per-prompt sums held (12 columns of 8 bytes: the fetched numpy
# arrays and DuckDB's result they are converted from); parts of whole judges take a
# quarter of the memory budget by it. A judge's rows are at most its distinct
# (dimension, prompt) pairs, bounded without a distinct count over the pairs
# (0.9 CPU s at 10M ratings) by its score-pair rows and by its dimensions times the
# prompts (10M ratings: 1.7M of 8.5M pairs, one part in the default 2GB; the pairs
# themselves were PAIR_BYTES = 100 each: two parts, every query run twice,
# judge-human 5.9-6.2 -> 4.7-5.3 CPU s)
SUM_BYTES = 2 * 12 * 8
# beside them, the judge's score cells (distinct dimension x judge score x human score,
# pandas frames of about as many bytes per row, with the groupby's copies: review19a),
# which the score pairs bound and so do the dimensions times the two scores' levels
SUM_ROWS = (
    "least(count(*), count(distinct dimension) * (select count(distinct prompt_id) "
    "+ (count(*) > count(prompt_id))::int from r))"  # a null prompt_id is a prompt too
    " + least(count(*), count(distinct dimension) * count(distinct judge_score_norm)"
    " * count(distinct human_score_norm))"
)

# the rows with both scores (NaN is no score: pandas' notna), judge and dimension
# numbered in a total order (the hash breaks a collation's ties)
_PAIRS = """f as (
    select judge, dimension, prompt_id, judge_score_norm as x, human_score_norm as y,
        n_rows::double as w
    from r
    where judge is not null and dimension is not null
        and not isnan(judge_score_norm) and not isnan(human_score_norm)
)"""
_GROUPS = """g as (
    select judge, dimension,
        row_number() over (order by judge, dimension, hash(judge), hash(dimension)) - 1 as key
    from (select distinct judge, dimension from f)
)"""


def _ranks(name: str, value: str, by: str) -> str:
    """Midranks of ``value`` within ``by`` (as ``_midranks``: cumulative count less
    (count - 1) / 2), one row per distinct value."""
    return f"""{name} as (
    select {by}, {value}, sum(c) over (partition by {by} order by {value}) - (c - 1) / 2 as rank
    from (select {by}, {value}, sum(w) as c from f group by {by}, {value})
)"""


def _prompt_sums_sql(by: str, keys: str) -> str:
    """Per group (``by``: judge, dimension or judge; ``keys`` numbers them in ``key``)
    x prompt: the sums of MOMENTS of the scores and RANK_MOMENTS of their midranks
    within the group."""
    on = " and ".join(f"f.{c} = {{t}}.{c}" for c in by.split(", "))
    return f"""
with {_PAIRS}, {_GROUPS},
{_ranks("kx", "x", by)},
{_ranks("ky", "y", by)},
keys as ({keys})
select keys.key,
    sum(f.w) as n,
    sum(f.w * f.x) as sx, sum(f.w * f.y) as sy,
    sum(f.w * f.x * f.x) as sxx, sum(f.w * f.y * f.y) as syy, sum(f.w * f.x * f.y) as sxy,
    sum(f.w * kx.rank) as rx, sum(f.w * ky.rank) as ry,
    sum(f.w * kx.rank * kx.rank) as rxx, sum(f.w * ky.rank * ky.rank) as ryy,
    sum(f.w * kx.rank * ky.rank) as rxy
from f
inner join kx on {on.format(t="kx")} and f.x = kx.x
inner join ky on {on.format(t="ky")} and f.y = ky.y
inner join keys on {on.format(t="keys")}
group by keys.key, f.prompt_id
order by keys.key
"""


def design_effect_from_sums(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, sums: dict[str, np.ndarray], names: tuple
) -> float:
    """``pearson_design_effect`` of the rows behind the cells (x, y, w: distinct
    values and their ratings) clustered by prompt, from the per-prompt sums
    ``sums[names]`` (n, x, y, x^2, y^2, xy): T_g = sum over the prompt's rows of
    zx zy - r (zx^2 + zy^2) / 2, expanded in the sums."""
    n = w.sum()
    n_g = sums[names[0]]
    n_clusters = int(np.count_nonzero(n_g > 0))
    if n_clusters < 2 or n < 3:
        return float("nan")
    moments = linearised(x, y, w)
    if moments is None:
        return float("nan")
    mx, my, sx, sy, r, influence = moments
    independent = n / (n - 1.0) * float(w @ (influence * influence))
    s_x, s_y, s_xx, s_yy, s_xy = (sums[k] for k in names[1:])
    cxy = s_xy - my * s_x - mx * s_y + n_g * mx * my
    cxx = s_xx - 2.0 * mx * s_x + n_g * mx * mx
    cyy = s_yy - 2.0 * my * s_y + n_g * my * my
    totals = cxy / (sx * sy) - r * (cxx / (sx * sx) + cyy / (sy * sy)) / 2.0
    clustered = n_clusters / (n_clusters - 1.0) * float(totals @ totals)
    if independent <= 0:
        return float("nan")
    return clustered / independent


def _group_row(
    cells: pd.DataFrame, sums: dict[str, np.ndarray], max_cells: int | None = None
) -> dict[str, Any]:
    """The statistics of one group from its cells (x, y, w) and per-prompt sums."""
    x, y, w = (cells[c].to_numpy(dtype=float) for c in ("x", "y", "w"))
    xs, xi = np.unique(x, return_inverse=True)
    ys, yi = np.unique(y, return_inverse=True)
    margins = cell_margins(xi, yi, w, xs.size, ys.size)
    stats_: dict[str, Any] = correlations_from_cells(xs, ys, xi, yi, w, max_cells, margins)
    if np.isfinite(stats_.get("pearson", np.nan)):
        n = stats_["n"]
        rank_x, rank_y = margins.rank_x[xi], margins.rank_y[yi]
        out: dict[str, Any] = {"n_prompts": int(np.count_nonzero(sums["n"] > 0))}
        for name, value, cx, cy, keys, base in (
            ("pearson", stats_["pearson"], x, y, MOMENTS, 1.0),
            ("spearman", stats_["spearman"], rank_x, rank_y, RANK_MOMENTS,
             1.0 + stats_["spearman"] ** 2 / 2.0),
        ):  # fmt: skip
            deff = design_effect_from_sums(cx, cy, w, sums, keys) if n > 3 else float("nan")
            inflation = max(deff, 1.0) if np.isfinite(deff) else float("nan")
            low, high = fisher_interval(value, inflation * base / (n - 3.0), Z95)
            out |= {f"{name}_design_effect": deff, f"{name}_ci_low": low, f"{name}_ci_high": high}
        stats_ |= out
    notes = correlation_notes(stats_, x, y, w, CORRELATIONS)
    stats_.pop(TABLE_SKIPPED, None)
    return stats_ | {"notes": notes}


def _fetch(rel: Any, sql: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The group keys (sorted) and per-prompt sums of ``sql``."""
    data = query(rel, sql).fetchnumpy()
    key = np.asarray(data.pop("key"), dtype=np.int64)
    return key, {c: np.asarray(v, dtype=float) for c, v in data.items()}


def judge_human_from_sums(relation: Any, budget: Budget | None = None) -> pd.DataFrame:
    """``judge_human_agreement`` of the distinct score pairs with counts (judge,
    dimension, prompt_id, judge_score_norm, human_score_norm, n_rows) of
    ``relation`` (DuckDB; pandas and Spark frames go through pandas), from the
    cells and per-prompt sums DuckDB computes: the same rows, values to rounding.
    Every statistic is one judge's, so the judges are read in parts whose per-prompt
    sums (``SUM_ROWS`` rows of ``SUM_BYTES``) take at most a quarter of the memory
    budget (``budget``, default 2GB), in their sorted order: one part's per-prompt
    sums of one grouping in memory at a time."""
    rel = as_duckdb(relation)
    budget = budget or Budget()
    parts = parts_of(rel, "judge", budget.bytes // 4 // SUM_BYTES, SUM_ROWS)
    max_cells = max(budget.bytes // 4 // TABLE_CELL_BYTES, MIN_TABLE_CELLS)
    rows = [row for part in parts for row in _part_rows(part, max_cells)]
    return frame(rows, JUDGE_HUMAN_COLUMNS)


def _part_rows(rel: Any, max_cells: int | None = None) -> list[dict[str, Any]]:
    """The mart's rows of the judges of ``rel``, judges sorted."""
    cells = query(
        rel,
        f"with {_PAIRS} select judge, dimension, x, y, sum(w) as w from f group by all",
    ).df()
    groups = query(rel, f"with {_PAIRS}, {_GROUPS} select * from g order by key").df()
    if groups.empty:
        return []
    judge_keys = "select judge, min(key) as key from g group by judge"
    first = query(rel, f"with {_PAIRS}, {_GROUPS} {judge_keys}").df()
    jkey = dict(zip(first["judge"], first["key"].astype(int), strict=True))

    def sums_of(keys: np.ndarray, sums: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
        a, b = np.searchsorted(keys, [k, k + 1])
        return {c: v[a:b] for c, v in sums.items()}

    # one grouping's per-prompt sums held at a time (SUM_ROWS bounds the larger)
    by_group = dict(tuple(cells.groupby(["judge", "dimension"], sort=False)))
    dim_key, dim_sums = _fetch(rel, _prompt_sums_sql("judge, dimension", "select * from g"))
    per_judge: dict[Any, list[dict[str, Any]]] = {}
    for judge in sorted(jkey):
        mine = groups[groups["judge"] == judge]
        per_judge[judge] = [
            {"judge": judge, "dimension": dimension}
            | _group_row(by_group[(judge, dimension)], sums_of(dim_key, dim_sums, k), max_cells)
            for dimension, k in sorted(zip(mine["dimension"], mine["key"].astype(int), strict=True))
        ]
    del dim_key, dim_sums, by_group
    by_judge = dict(tuple(cells.groupby("judge", sort=False)))
    all_key, all_sums = _fetch(rel, _prompt_sums_sql("judge", judge_keys))
    rows = []
    for judge in sorted(jkey):
        stats_ = _group_row(by_judge[judge], sums_of(all_key, all_sums, jkey[judge]), max_cells)
        rows += [*per_judge[judge], {"judge": judge, "dimension": "all"} | stats_]
    return rows
