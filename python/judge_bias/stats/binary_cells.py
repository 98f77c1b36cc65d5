"""agreement_binary's statistics from per-prompt cells instead of one row per rating.

Every statistic of ``binary_agreement`` is a function of sums over a prompt's
ratings: the ratings (n), the judge passes (jpass), the labelled ratings (nlab),
the 2 x 2 counts (tp, fp, ff, tf: judge first) and the moments of the labelled
scores (sx, sy, sxx, syy, sxy). DuckDB sums them per judge x dimension x prompt
(``prompt_cells``), weighted by the ratings each distinct score pair stands for,
and the prompts come back as integer codes in the string order of their ids: the
order ``cluster_codes`` numbers them in, which decides which prompt each column
of the bootstrap's resample counts goes to. So the draws and their assignment
are those of the rating-level computation (``binary_agreement``), and the
statistics equal it to rounding (the sums are associated differently).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from judge_bias.stats.level_intervals import Estimate, percentile, z_value
from judge_bias.warehouse.frames import to_pandas

Moment = np.ndarray | float  # a sum, or B bootstrap replicates of it

# the per-prompt sums, in the order binary_agreement's bootstrap stacks them
BOOT_SUMS = ("tp", "fp", "ff", "tf", "nlab", "sx", "sy", "sxx", "syy", "sxy")
COUNTS = ("n", "jpass", "nlab", "tp", "fp", "ff", "tf")
CELL_COLUMNS = (*COUNTS, "sx", "sy", "sxx", "syy", "sxy")


def gwet_ac1_binary(
    n11: np.ndarray, n10: np.ndarray, n01: np.ndarray, n00: np.ndarray
) -> np.ndarray:
    """AC1 from the 2 x 2 counts (judge first: n10 = judge pass, human fail);
    NaN where there are no units."""
    n = np.asarray(n11 + n10 + n01 + n00, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = (n11 + n00) / n
        pi = (2 * n11 + n10 + n01) / (2 * n)
        p_e = 2 * pi * (1 - pi)
        return (p_o - p_e) / (1 - p_e)


def qwk_moments(
    n: Moment, sx: Moment, sy: Moment, sxx: Moment, syy: Moment, sxy: Moment
) -> np.ndarray:
    """Quadratic-weighted kappa from the sums of x, y, x^2, y^2, xy over n units;
    NaN where the expected disagreement is 0 (both sides one constant)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mx, my = sx / n, sy / n
        observed = (sxx + syy - 2 * sxy) / n
        expected = (sxx + syy) / n - 2 * mx * my
        return np.where(expected > 1e-12, 1 - observed / expected, np.nan)


# prompts and judge x dimension groups numbered in a total order (the hash breaks the
# ties of a collation that equates distinct ids): the same numbers in each query
PROMPTS = """prompts as (
    select prompt_id, row_number() over (order by prompt_id, hash(prompt_id)) - 1 as code
    from (select distinct prompt_id from r)
)"""
GROUPS = """groups as (
    select
        judge,
        dimension,
        row_number() over (order by judge, dimension, hash(judge), hash(dimension)) - 1 as key
    from (
        select distinct judge, dimension from r
        where judge is not null and dimension is not null
    )
)"""


def _cells_sql(threshold: float) -> str:
    """Per judge x dimension (``key``) x prompt (``code``) sums of relation ``r``."""
    thr = f"'{float(threshold)!r}'::double"
    # numpy's comparisons: NaN passes nothing, is not a label (np.isfinite)
    jp = f"coalesce(judge_score_norm >= {thr} and not isnan(judge_score_norm), false)"
    hp = f"coalesce(human_score_norm >= {thr} and not isnan(human_score_norm), false)"
    lab = "coalesce(isfinite(human_score_norm), false)"
    cases = {
        "jpass": f"{jp}",
        "nlab": lab,
        "tp": f"{lab} and {jp} and {hp}",
        "fp": f"{lab} and {jp} and not {hp}",
        "ff": f"{lab} and not {jp} and {hp}",
        "tf": f"{lab} and not {jp} and not {hp}",
    }
    counts = ",\n".join(
        f"sum(case when {cond} then n_rows else 0 end)::bigint as {name}"
        for name, cond in cases.items()
    )
    moments = {
        "sx": "judge_score_norm",
        "sy": "human_score_norm",
        "sxx": "judge_score_norm * judge_score_norm",
        "syy": "human_score_norm * human_score_norm",
        "sxy": "judge_score_norm * human_score_norm",
    }
    sums = ",\n".join(
        f"sum(case when {lab} then n_rows * ({v}) else 0.0 end)::double as {name}"
        for name, v in moments.items()
    )
    # summed per judge, dimension and prompt first, numbered after: the joins read
    # the 1.7M sums, not the 8.5M rows (10M ratings: ~15% of the query's CPU)
    return f"""
with {PROMPTS}, {GROUPS},
s as (
    select judge, dimension, prompt_id, sum(n_rows)::bigint as n,
{counts},
{sums}
    from r
    where judge is not null and dimension is not null
    group by judge, dimension, prompt_id
)
select g.key, p.code, s.* exclude (judge, dimension, prompt_id)
from s
inner join groups as g on s.judge = g.judge and s.dimension = g.dimension
inner join prompts as p on s.prompt_id is not distinct from p.prompt_id
"""


def as_duckdb(relation: Any) -> duckdb.DuckDBPyRelation:
    """A DuckDB relation of ``relation`` (pandas and Spark frames go through pandas)."""
    if isinstance(relation, duckdb.DuckDBPyRelation):
        return relation
    return duckdb.from_df(to_pandas(relation))


def query(rel: duckdb.DuckDBPyRelation, sql: str) -> duckdb.DuckDBPyRelation:
    """``sql`` over ``rel`` named ``r`` (a statement that returns rows)."""
    out = rel.query("r", sql)
    if out is None:  # a statement without a result: not one of these queries
        raise TypeError(f"no result from {sql[:60]}")
    return out


def cell_counts(relation: Any) -> tuple[int, int]:
    """(judge x dimension x prompt cells, distinct prompts) of the rows, counted by
    DuckDB: what ``prompt_cells`` will return, before it is read."""
    cells, prompts = query(
        as_duckdb(relation),
        "select count(*), count(distinct prompt_id) from "
        "(select distinct judge, dimension, prompt_id from r "
        "where judge is not null and dimension is not null)",
    ).fetchall()[0]
    return int(cells), int(prompts)


def cell_bounds(relation: Any) -> tuple[int, int]:
    """(an upper bound of ``cell_counts``' cells, its distinct prompts), without the
    distinct judge x dimension x prompt triples (10M ratings: 0.75 -> 0.23 CPU s):
    the cells are at most the rows and at most the judge x dimension groups times
    the prompts."""
    rows, prompts, null_prompt, groups = query(
        as_duckdb(relation),
        "select count(*), count(distinct prompt_id), (count(*) > count(prompt_id))::int, "
        "count(distinct (judge, dimension)) "
        "from r where judge is not null and dimension is not null",
    ).fetchall()[0]
    # a null prompt_id is a cell of its group, not one of the distinct prompts
    return min(int(rows), int(groups) * (int(prompts) + int(null_prompt))), int(prompts)


def string_ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct strings of ``values`` (str of each value):
    the codes ``cluster_codes`` gives."""
    _, inverse = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    return inverse.ravel()


def prompt_cells(relation: Any, threshold: float) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """(groups: judge, dimension, key; cells: key, code and CELL_COLUMNS, sorted by key
    and code) of the rows judge, dimension, prompt_id, judge_score_norm,
    human_score_norm, n_rows; ``code`` numbers the prompts in the string order of
    their ids (DuckDB's collation may differ: its order is mapped to Python's)."""
    rel = as_duckdb(relation)
    cells = query(rel, _cells_sql(threshold)).fetchnumpy()
    prompts = query(rel, f"with {PROMPTS} select prompt_id from prompts order by code")
    groups = query(rel, f"with {GROUPS} select * from groups order by key").df()
    out = {c: np.asarray(cells[c]) for c in ("key", "code", *CELL_COLUMNS)}
    ranks = string_ranks(np.asarray(prompts.fetchnumpy()["prompt_id"], dtype=object))
    duckdb_code = out["code"]
    if out["code"].size and not np.array_equal(ranks, np.arange(ranks.size)):
        out["code"] = ranks[out["code"]]
    # sorted here, not by the query: by key, code and then DuckDB's code (a NULL prompt
    # and "None" share a code: review21a), the order an `order by key, code` then the
    # stable sort on the mapped codes gave, at ~0.2 CPU s for 1.7M cells where
    # DuckDB's sort of the fetched columns took ~2 CPU s and ~5 s of wall (10M ratings)
    order = np.lexsort((duckdb_code, out["code"], out["key"]))
    return groups, {c: v[order] for c, v in out.items()}


def pooled(cells: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """The cells at ``rows`` summed per prompt code (a judge's dimensions pooled).
    One group's rows (codes strictly increasing: checked, a NULL prompt and "None"
    share a code) are their own sums: taken as they are. Otherwise each code's cells
    are added in the order of ``rows`` (as the sums per ``np.unique`` code did),
    counted over the codes' range, not sorted."""
    codes = cells["code"][rows]
    if codes.size < 2 or bool(np.all(codes[1:] > codes[:-1])):
        return {"code": codes} | {c: cells[c][rows] for c in CELL_COLUMNS}
    present = np.bincount(codes) > 0
    out = {"code": np.flatnonzero(present)}
    for c in CELL_COLUMNS:
        summed = np.bincount(codes, weights=cells[c][rows])[present]
        out[c] = summed.astype(np.int64) if c in COUNTS else summed
    return out


def wilson_from_counts(
    hits: np.ndarray, units: np.ndarray, level: float, cap: bool = True
) -> Estimate:
    """``clustered_wilson`` of 0/1 units from each cluster's units and hits."""
    live = units > 0
    hits, units = hits[live].astype(float), units[live].astype(float)
    n = float(units.sum())
    if n == 0:
        return Estimate(None, note="no units")
    p = float(hits.sum()) / n
    g = int(units.size)
    if g < 2:
        n_eff = 1.0
    else:
        resid = hits - p * units
        var_c = g / (g - 1) * float(np.sum(resid**2)) / n**2
        if var_c > 0 and n > 1:
            n_eff = n * p * (1 - p) / ((n - 1) * var_c)
            n_eff = max(1.0, min(n, n_eff) if cap else n_eff)
        else:
            n_eff = n
    low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - level, method="wilson")
    note = "one prompt: the interval assumes one unit" if g < 2 else None
    return Estimate(p, float(min(low, p)), float(max(high, p)), note)


def rg_interval(theta: float, var: float, level: float) -> Estimate:
    """The Rogan-Gladen pass rate ``theta`` with its Wald interval of variance ``var``,
    both clipped to [0, 1] (noted when theta is outside)."""
    half = z_value(level) * float(np.sqrt(max(var, 0.0)))
    note = "rg_pass_rate: clipped to [0, 1]" if not 0 <= theta <= 1 else None
    clip = lambda v: float(np.clip(v, 0.0, 1.0))  # noqa: E731
    return Estimate(clip(theta), clip(theta - half), clip(theta + half), note)


def rogan_gladen_from_counts(c: dict[str, np.ndarray], level: float) -> Estimate:
    """The Rogan-Gladen pass rate, the clustered linearisation interval, from
    per-prompt counts (tests/agreement_reference.py: ``rogan_gladen``, per rating)."""
    n, jpass = float(c["n"].sum()), float(c["jpass"].sum())
    tp, fp, ff, tf = (float(c[k].sum()) for k in ("tp", "fp", "ff", "tf"))
    n_pos, n_neg = tp + ff, fp + tf
    if n == 0 or n_pos == 0 or n_neg == 0:
        return Estimate(None, note="rg_pass_rate: the human verdicts lack a class")
    sens, spec = tp / n_pos, 1 - fp / n_neg
    youden = sens + spec - 1
    if youden <= 0:
        return Estimate(None, note="rg_pass_rate: sensitivity + specificity <= 1")
    p_obs = jpass / n
    theta = (p_obs + spec - 1) / youden
    g = int((c["n"] > 0).sum())
    if g < 2:
        return Estimate(float(np.clip(theta, 0, 1)), note="fewer than 2 prompts: no interval")
    totals = (
        (c["jpass"] - p_obs * c["n"]) / n
        - theta * (c["tp"] - sens * (c["tp"] + c["ff"])) / n_pos
        + (1 - theta) * (c["tf"] - spec * (c["fp"] + c["tf"])) / n_neg
    ) / youden
    var = g / (g - 1) * float(np.sum(totals**2))
    return rg_interval(theta, var, level)


def labelled_sums(c: dict[str, np.ndarray]) -> np.ndarray:
    """The bootstrap's per-prompt sums of one group's cells: rows in ``BOOT_SUMS``
    order, one column per labelled prompt."""
    lab = c["nlab"] > 0
    return np.vstack([c[k][lab].astype(float) for k in BOOT_SUMS])


def bootstrap_products(
    groups: list[dict[str, np.ndarray]],
    n_boot: int,
    seed: int,
    boot_counts: Callable[[int, int, int], np.ndarray],
    chunk_bytes: int = 64 << 20,
) -> list[np.ndarray | None]:
    """For each group's cells, ``boot_counts(g, n_boot, seed) @ labelled_sums(c).T``
    (None with fewer than 2 labelled prompts): the groups with the same G in one
    matrix product per ``chunk_bytes`` of their stacked sums, so the B x G counts
    are drawn once per G and read once per chunk, not once per group (at 10M
    ratings 18 products of 500 x 139k weights were ~4 CPU s). Groups in order of
    G: a ``boot_counts`` that keeps its last draw draws each G once."""
    out: list[np.ndarray | None] = [None] * len(groups)
    sizes = [int((c["nlab"] > 0).sum()) for c in groups]
    for g in sorted(set(sizes) - {0, 1}):
        mine = [i for i, size in enumerate(sizes) if size == g]
        per_chunk = max(1, chunk_bytes // (len(BOOT_SUMS) * g * 8))
        for start in range(0, len(mine), per_chunk):
            part = mine[start : start + per_chunk]
            # labelled_sums of each group, written into one matrix (no copy per group)
            stacked = np.empty((len(part) * len(BOOT_SUMS), g))
            for j, i in enumerate(part):
                lab = groups[i]["nlab"] > 0
                for k, name in enumerate(BOOT_SUMS):
                    stacked[j * len(BOOT_SUMS) + k] = groups[i][name][lab]
            product = boot_counts(g, n_boot, seed) @ stacked.T
            for j, i in enumerate(part):
                out[i] = product[:, j * len(BOOT_SUMS) : (j + 1) * len(BOOT_SUMS)]
    return out


def estimates_from_sums(
    sums: np.ndarray,
    *,
    level: float,
    n_boot: int,
    seed: int,
    boot_counts: Callable[[int, int, int], np.ndarray],
    notes: list[str],
    boot: np.ndarray | None = None,
) -> tuple[Estimate, Estimate]:
    """Gwet's AC1 and QWK, with percentile intervals of a bootstrap over prompts, from
    the per-prompt sums ``sums`` (rows in ``BOOT_SUMS`` order, one column per labelled
    prompt). Appends to ``notes`` why an estimate or interval is null: no labelled
    prompt, fewer than 2 prompts (no interval), both sides one constant (QWK 0/0).
    ``boot``: the replicates' sums ``boot_counts(g, n_boot, seed) @ sums.T`` when
    already computed (``bootstrap_products``)."""
    g = sums.shape[1]
    if not g:
        notes.append("no human labels: agreement is null")
        return Estimate(None), Estimate(None)
    tot = sums.sum(axis=1)
    if g < 2:
        boot = None
    elif boot is None:
        boot = boot_counts(g, n_boot, seed) @ sums.T
    ac1_point = float(gwet_ac1_binary(*tot[:4]))
    qwk_point = qwk_moments(*tot[4:])
    if boot is None:
        notes.append("fewer than 2 prompts: no bootstrap interval")
        ac1 = Estimate(ac1_point)
    else:
        ac1 = Estimate(ac1_point, *percentile(gwet_ac1_binary(*boot.T[:4]), level))
    qwk = Estimate(None)
    if not np.isfinite(qwk_point):
        notes.append("qwk: judge and human scores are one constant (0/0)")
    elif boot is None:
        qwk = Estimate(float(qwk_point))
    else:
        qwk = Estimate(float(qwk_point), *percentile(qwk_moments(*boot.T[4:]), level))
    return ac1, qwk


def binary_agreement_from_cells(
    c: dict[str, np.ndarray],
    *,
    pass_threshold: float,
    level: float,
    n_boot: int,
    seed: int,
    boot_counts: Callable[[int, int, int], np.ndarray],
    boot: np.ndarray | None = None,
) -> dict[str, object]:
    """``binary_agreement`` of one judge x dimension from its per-prompt cells
    (arrays over its prompts in code order); ``boot``: its bootstrap replicates'
    sums when already computed (``bootstrap_products``)."""
    notes: list[str] = []
    lab = c["nlab"] > 0
    tp, fp, ff, tf = (int(c[k].sum()) for k in ("tp", "fp", "ff", "tf"))
    n_judged, n_labelled = int(c["n"].sum()), int(c["nlab"].sum())
    row: dict[str, object] = {
        "n_judged": n_judged,
        "n_labelled": n_labelled,
        "n_prompts": int(lab.sum()),
        "true_pass": tp,
        "false_pass": fp,
        "false_fail": ff,
        "true_fail": tf,
        "judge_pass_rate": float(c["jpass"].sum()) / n_judged if n_judged else None,
        "human_pass_rate": (tp + ff) / n_labelled if n_labelled else None,
    }
    rates = {
        "accuracy": wilson_from_counts(c["tp"] + c["tf"], c["nlab"], level),
        "sensitivity": wilson_from_counts(c["tp"], c["tp"] + c["ff"], level),
        "specificity": wilson_from_counts(c["tf"], c["fp"] + c["tf"], level),
    }
    if tp + ff == 0:
        notes.append("sensitivity: no human pass")
    if n_labelled and fp + tf == 0:
        notes.append("specificity: no human fail")
    ac1, qwk = estimates_from_sums(
        labelled_sums(c), level=level, n_boot=n_boot, seed=seed, boot_counts=boot_counts,
        notes=notes, boot=boot,
    )  # fmt: skip
    rg = rogan_gladen_from_counts(c, level)
    if n_labelled and rg.note:
        notes.append(rg.note)
    for name, est in {**rates, "gwet_ac1": ac1, "qwk": qwk, "rg_pass_rate": rg}.items():
        row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = est.point, est.low, est.high
    row["notes"] = "; ".join(notes) or None
    return row
