"""Judge vs human correlations: Spearman (ties averaged), Pearson, Kendall tau-b and
Goodman-Kruskal gamma, each with a 95% interval: Fisher z for Pearson, Fisher z
with the Bonett-Wright (2000) variance for Spearman, Fisher z with the Fieller et
al. (1957) variance 0.437 / (n - 4) for Kendall, and the asymptotic standard error
of gamma (Goodman-Kruskal, as in Agresti). With prompt ids, the Pearson and
Spearman intervals carry a prompt-level design effect
(``stats.clustered_correlation``): ratings of one prompt are not independent.
Kendall and gamma intervals still assume independent rows. Also the agreement
marts' shared helpers: ``frame`` (a typed mart frame) and ``segments`` (a group-by
over numpy codes).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from judge_bias.agreement.clustered_correlation import (
    clustered_correlation_intervals,
    distinct_inverse,
)
from judge_bias.agreement.correlation_notes import correlation_notes
from judge_bias.limits import Budget

Z95 = stats.norm.ppf(0.975)


CORRELATIONS = ("spearman", "pearson", "kendall_tau_b", "gk_gamma")


JUDGE_HUMAN_COLUMNS: dict[str, str] = (
    {"judge": "str", "dimension": "str", "n": "int64"}
    | {k: "float64" for nm in CORRELATIONS for k in (nm, f"{nm}_ci_low", f"{nm}_ci_high")}
    | {"n_prompts": "Int64"}
    | dict.fromkeys(("pearson_design_effect", "spearman_design_effect"), "float64")
    | {"notes": "string"}
)


def frame(rows: list[dict[str, object]], columns: dict[str, str]) -> pd.DataFrame:
    """rows as a DataFrame with every column of ``columns`` (typed, null where no row
    has it); with no rows, an empty one with the typed columns (a warehouse without
    judge ratings still gets every mart, with its columns)."""
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in columns.items()})
    out = pd.DataFrame(rows)
    # a statistic left out of every row (no finite Pearson: no clustered interval, no
    # n_prompts) is still a column, null: the contracted mart selects every column
    for c, t in columns.items():
        if c not in out:
            out[c] = pd.Series(pd.NA if t == "Int64" else None, index=out.index, dtype=t)
    return out


def _fisher_interval(r: float, se: float) -> tuple[float, float]:
    if not np.isfinite(r) or not np.isfinite(se) or abs(r) >= 1:
        return (np.nan, np.nan)
    z = np.arctanh(r)
    return float(np.tanh(z - Z95 * se)), float(np.tanh(z + Z95 * se))


def contingency(
    x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct x, distinct y, table of counts): rows, or distinct pairs with counts."""
    xs, xi = distinct_inverse(x)
    ys, yi = distinct_inverse(y)
    table = np.zeros((len(xs), len(ys)))
    np.add.at(table, (xi, yi), 1.0 if weights is None else np.asarray(weights, dtype=float))
    return xs, ys, table


def _concordance(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each cell, the counts of concordant and discordant cells (strictly
    below-left plus above-right; below-right plus above-left), from 2-D cumulative
    sums (zero-padded: cum[i, j] = sum of table[:i, :j])."""
    rows, cols = table.shape
    cum = np.zeros((rows + 1, cols + 1))
    cum[1:, 1:] = table.cumsum(axis=0).cumsum(axis=1)
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    below_left = cum[i, j]
    above_right = cum[rows, cols] - cum[i + 1, cols] - cum[rows, j + 1] + cum[i + 1, j + 1]
    below_right = cum[i, cols] - cum[i, j + 1]
    above_left = cum[rows, j] - cum[i + 1, j]
    return below_left + above_right, below_right + above_left


def gamma_from_table(table: np.ndarray) -> tuple[float, float]:
    """Goodman-Kruskal gamma and its asymptotic standard error from a contingency table."""
    return _gamma_from_concordance(table, *_concordance(table))


def _gamma_from_concordance(
    table: np.ndarray, conc: np.ndarray, disc: np.ndarray
) -> tuple[float, float]:
    """gamma_from_table given the table's ``_concordance`` (correlations_from_table
    has it already: a second pass cost two cumulative sums and a dozen arrays of the
    table's size)."""
    p, q = float((table * conc).sum()), float((table * disc).sum())
    if p + q == 0:
        return np.nan, np.nan
    gamma = (p - q) / (p + q)
    ase = 4.0 / (p + q) ** 2 * np.sqrt(float((table * (q * conc - p * disc) ** 2).sum()))
    return gamma, ase


def goodman_kruskal_gamma(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Gamma and its asymptotic standard error, from the x-by-y contingency table."""
    return gamma_from_table(contingency(x, y)[2])


def _midranks(totals: np.ndarray) -> np.ndarray:
    """Average rank of each distinct value (sorted) given how often each occurs."""
    return np.cumsum(totals) - (totals - 1.0) / 2.0


class Margins(NamedTuple):
    """The x and y levels' totals (ratings at each level) and midranks (``_midranks``)."""

    row_tot: np.ndarray
    col_tot: np.ndarray
    rank_x: np.ndarray
    rank_y: np.ndarray


def _margins(row_tot: np.ndarray, col_tot: np.ndarray) -> Margins:
    return Margins(row_tot, col_tot, _midranks(row_tot), _midranks(col_tot))


def cell_margins(xi: np.ndarray, yi: np.ndarray, w: np.ndarray, nx: int, ny: int) -> Margins:
    """The Margins of cells with level codes ``xi`` (of ``nx`` levels), ``yi`` (of
    ``ny``) and counts ``w``: a caller that needs the midranks too (the design
    effects of judge_human_sums) computes them once and passes them to
    ``correlations_from_cells``."""
    return _margins(
        np.bincount(xi, weights=w, minlength=nx), np.bincount(yi, weights=w, minlength=ny)
    )


def _weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    n = w.sum()
    da, db = a - (w @ a) / n, b - (w @ b) / n
    return float((w * da * db).sum() / np.sqrt((w * da * da).sum() * (w * db * db).sum()))


def correlations_from_table(
    xs: np.ndarray, ys: np.ndarray, table: np.ndarray, margins: Margins | None = None
) -> dict:
    """Spearman (average ranks), Pearson, Kendall tau-b and gamma with 95% intervals,
    from the contingency table of the pairs: equal to scipy's on the expanded rows.
    ``margins``: the table's, when the caller has them (else from the table)."""
    n = int(round(table.sum()))
    out: dict[str, float] = {"n": n}
    names = CORRELATIONS
    if margins is None:
        margins = _margins(table.sum(axis=1), table.sum(axis=0))
    row_tot, col_tot = margins.row_tot, margins.col_tot
    if n < 5 or (row_tot > 0).sum() < 2 or (col_tot > 0).sum() < 2:
        return out | {k: np.nan for nm in names for k in (nm, f"{nm}_ci_low", f"{nm}_ci_high")}
    i, j = np.nonzero(table)
    w = table[i, j]
    rp = _weighted_pearson(xs[i].astype(float), ys[j].astype(float), w)
    rs = _weighted_pearson(margins.rank_x[i], margins.rank_y[j], w)
    conc, disc = _concordance(table)
    pairs = n * (n - 1) / 2.0
    s_diff = float((table * (conc - disc)).sum()) / 2.0
    ties_x = float((row_tot * (row_tot - 1)).sum()) / 2.0
    ties_y = float((col_tot * (col_tot - 1)).sum()) / 2.0
    tau = s_diff / np.sqrt((pairs - ties_x) * (pairs - ties_y))
    gamma, gamma_se = _gamma_from_concordance(table, conc, disc)
    intervals = {
        "spearman": (rs, _fisher_interval(rs, np.sqrt((1 + rs**2 / 2) / (n - 3)))),
        "pearson": (rp, _fisher_interval(rp, 1 / np.sqrt(n - 3))),
        "kendall_tau_b": (tau, _fisher_interval(tau, np.sqrt(0.437 / (n - 4)))),
        # at |gamma| = 1 (no untied pair disagrees, or none agrees) the asymptotic
        # standard error is 0: no interval, as Fisher's at |r| = 1 (a note says so)
        "gk_gamma": (
            gamma,
            (max(-1.0, gamma - Z95 * gamma_se), min(1.0, gamma + Z95 * gamma_se))
            if abs(gamma) < 1
            else (np.nan, np.nan),
        ),
    }
    for name, (value, (lo, hi)) in intervals.items():
        out |= {name: value, f"{name}_ci_low": lo, f"{name}_ci_high": hi}
    return out


# bytes a contingency table's cell costs (_concordance, gamma's standard error: about
# a dozen arrays of the table's size, 8 bytes a cell; 12.3 measured by review19e)
TABLE_CELL_BYTES = 13 * 8
# the table within a quarter of the memory budget (the default's here: 4.8M cells;
# judge_human_from_sums passes the build's): a judge and a human score of thousands
# of levels each (continuous scores) asked for tens of GB (review19a: 150,000 x
# 150,000 levels, 168 GiB)
MAX_TABLE_CELLS = Budget().bytes // 4 // TABLE_CELL_BYTES
# and never under 256 x 256 levels (7 MB): a budget small enough to split the judges
# into parts (the tests') still gets every correlation of a few-level scale
MIN_TABLE_CELLS = 256 * 256
# the stats' key of the note saying the table-based statistics were not computed
# (correlation_notes reads it; the callers drop it from the row)
TABLE_SKIPPED = "_table_skipped"


def correlations_from_cells(
    xs: np.ndarray,
    ys: np.ndarray,
    xi: np.ndarray,
    yi: np.ndarray,
    w: np.ndarray,
    max_cells: int | None = None,
    margins: Margins | None = None,
) -> dict:
    """correlations_from_table's statistics of the pairs' cells (the x and y levels,
    each pair's level codes, its count); when the table would be over ``max_cells``
    (default MAX_TABLE_CELLS), Pearson and Spearman from the cells alone (the same
    values: the midranks come from the levels' totals) and Kendall's tau-b and gamma
    null, with TABLE_SKIPPED saying why. ``margins``: ``cell_margins`` of the cells,
    when the caller has them."""
    cap = MAX_TABLE_CELLS if max_cells is None else max_cells
    if margins is None:
        margins = cell_margins(xi, yi, w, xs.size, ys.size)
    if xs.size * ys.size <= cap:
        table = np.zeros((xs.size, ys.size))
        np.add.at(table, (xi, yi), w)
        return correlations_from_table(xs, ys, table, margins)
    row_tot, col_tot = margins.row_tot, margins.col_tot
    n = int(round(row_tot.sum()))
    out: dict = {"n": n}
    nan = {k: np.nan for nm in CORRELATIONS for k in (nm, f"{nm}_ci_low", f"{nm}_ci_high")}
    if n < 5 or (row_tot > 0).sum() < 2 or (col_tot > 0).sum() < 2:
        return out | nan
    rp = _weighted_pearson(xs[xi].astype(float), ys[yi].astype(float), w)
    rs = _weighted_pearson(margins.rank_x[xi], margins.rank_y[yi], w)
    out |= nan
    out |= {
        "spearman": rs,
        **dict(zip(("spearman_ci_low", "spearman_ci_high"),
                   _fisher_interval(rs, np.sqrt((1 + rs**2 / 2) / (n - 3))), strict=True)),
        "pearson": rp,
        **dict(zip(("pearson_ci_low", "pearson_ci_high"),
                   _fisher_interval(rp, 1 / np.sqrt(n - 3)), strict=True)),
    }  # fmt: skip
    out[TABLE_SKIPPED] = (
        f"kendall_tau_b and gk_gamma null: {xs.size:,} x {ys.size:,} score levels, "
        f"a contingency table over {cap:,} cells (a quarter of memory_budget at "
        f"{TABLE_CELL_BYTES} bytes a cell; raise it with --vars '{{memory_budget: ...}}')"
    )
    return out


def correlations(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> dict:
    """Spearman, Pearson, Kendall tau-b and gamma with 95% intervals, on rows (or
    distinct pairs with their counts in ``weights``)."""
    n = len(x) if weights is None else float(np.sum(weights))
    if n < 5:  # as correlations_from_table decides, without building the table
        names = CORRELATIONS
        return {"n": int(round(n))} | {
            k: np.nan for nm in names for k in (nm, f"{nm}_ci_low", f"{nm}_ci_high")
        }
    xs, xi = distinct_inverse(x)
    ys, yi = distinct_inverse(y)
    w = np.ones(len(xi)) if weights is None else np.asarray(weights, dtype=float)
    return correlations_from_cells(xs, ys, xi, yi, w)


def segments(*codes: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The stable order that sorts rows by ``codes`` (first code first) and the
    [start, end) of each run of equal codes in it: a group-by over numpy arrays
    without a pandas group object per group (50,000 judges made that loop the
    slowest step of a build)."""
    order = np.lexsort(codes[::-1]) if codes[0].size else np.arange(0)
    if not order.size:
        return order, []
    change = np.zeros(order.size, dtype=bool)
    change[0] = True
    for code in codes:
        c = code[order]
        change[1:] |= c[1:] != c[:-1]
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], order.size)
    return order, list(zip(starts.tolist(), ends.tolist(), strict=True))


def judge_human_agreement(fct: pd.DataFrame) -> pd.DataFrame:
    """Correlations per judge x dimension and per judge over all dimensions
    (positive frame, normalised scores, rows with both scores).

    ``fct`` holds ratings, or distinct (judge, dimension, [prompt_id,]
    judge_score_norm, human_score_norm) with their counts in ``n_rows`` (framing
    then omitted). With ``prompt_id``, the Pearson and Spearman intervals get the
    prompt-level design effect (clusters = prompts, pooled over dimensions in
    the ``all`` row)."""
    df = fct
    if "framing" in df:
        df = df[df["framing"] == "positive"]
    df = df[df["judge_score_norm"].notna() & df["human_score_norm"].notna()]
    judge, judges = pd.factorize(df["judge"], sort=True)
    dim, dims = pd.factorize(df["dimension"], sort=True)
    order, by_dimension = segments(judge, dim)
    x = df["judge_score_norm"].to_numpy(float)[order]
    y = df["human_score_norm"].to_numpy(float)[order]
    w = df["n_rows"].to_numpy(float)[order] if "n_rows" in df else None
    prompt = pd.factorize(df["prompt_id"])[0][order] if "prompt_id" in df else None
    judge, dim = judge[order], dim[order]

    def row(judge_code: int, dimension: str, a: int, b: int) -> dict:
        weights = None if w is None else w[a:b]
        stats_ = correlations(x[a:b], y[a:b], weights)
        if prompt is not None and np.isfinite(stats_.get("pearson", np.nan)):
            stats_ |= clustered_correlation_intervals(
                x[a:b], y[a:b], prompt[a:b], weights,
                stats_["pearson"], stats_["spearman"], stats_["n"], Z95,
            )  # fmt: skip
        notes = correlation_notes(stats_, x[a:b], y[a:b], weights, CORRELATIONS)
        stats_.pop(TABLE_SKIPPED, None)
        return {"judge": judges[judge_code], "dimension": dimension} | stats_ | {"notes": notes}

    rows = []
    i = 0
    for start, end in segments(judge)[1]:  # each judge's rows, judges in sorted order
        while i < len(by_dimension) and by_dimension[i][0] < end:
            a, b = by_dimension[i]
            rows.append(row(judge[start], dims[dim[a]], a, b))
            i += 1
        rows.append(row(judge[start], "all", start, end))
    return frame(rows, JUDGE_HUMAN_COLUMNS)
