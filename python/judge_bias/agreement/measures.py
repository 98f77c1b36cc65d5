"""Agreement between annotators, and between judges and the human reference.

- Annotators: Krippendorff's alpha (nominal, ordinal, interval) from per-item
  value counts, equal to the ``krippendorff`` package's (the tests' reference); observed
  agreement = share of items with at least two labels where all agree.
- Judge vs human: Spearman (ties averaged), Pearson, Kendall tau-b and
  Goodman-Kruskal gamma, each with a 95% interval: Fisher z for Pearson,
  Fisher z with the Bonett-Wright (2000) variance for Spearman, Fisher z with
  the Fieller et al. (1957) variance 0.437 / (n - 4) for Kendall, and the
  asymptotic standard error of gamma (Goodman-Kruskal, as in Agresti).
  With prompt ids, the Pearson and Spearman intervals carry a prompt-level
  design effect (``stats.clustered_correlation``): ratings of one prompt are
  not independent. Kendall and gamma intervals still assume independent rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse
from scipy import stats

from judge_bias.agreement.clustered_correlation import (
    clustered_correlation_intervals,
    distinct_inverse,
)
from judge_bias.agreement.correlation_notes import correlation_notes
from judge_bias.agreement.headline_alpha import LEVELS, with_headline_alpha
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


ANNOTATOR_COLUMNS: dict[str, str] = {
    "dimension": "string",
    **dict.fromkeys(("n_items", "n_annotators", "n_labels"), "Int64"),
    **dict.fromkeys(("observed_agreement", *(f"alpha_{lvl}" for lvl in LEVELS)), "float64"),
    "n_gold_items": "Int64",
    **dict.fromkeys(("gold_accuracy", "gold_spearman"), "float64"),
    "notes": "string",
    "level_of_measurement": "string",
    "alpha": "float64",
}


LABEL_BYTES = 9 * 80  # a human label pulled into pandas (9 columns as objects)
# int_annotator_label_counts as marts.label_counts reads it (integer codes for the
# keys: ~52 bytes a row) through annotator_agreement_from_counts: LABEL_COUNT_BYTES a
# row plus, per DISTINCT prompt_id and model value (the reader holds each as a Python
# string, and DuckDB's distinct, numbering and join hold copies), LABEL_KEY_BYTES and
# LABEL_KEY_CHAR_BYTES a byte of the value (marts.label_count_bytes); Budget.rows
# charges it twice. Measured peak RSS growth of the read and the mart (the table in
# docs/resources.md): 281-296 B/row at 10M ratings (6-char ids), 412 and 433 with six
# labels an item (6- and 34-char ids), 644 and 919 with one row per 32- and 64-char
# prompt id (8.6 B a byte of a distinct id): charged 1.5 to 2.2 times that (1.86x
# a byte of a distinct id, so the margin holds for longer ids)
LABEL_COUNT_BYTES = 300
LABEL_KEY_BYTES = 32
LABEL_KEY_CHAR_BYTES = 8
LABEL_COUNT_STRING_BYTES = 9 * 80  # the same rows with their strings (a Spark frame)


COUNTERFACTUAL_COLUMNS: dict[str, str] = {
    "judge": "str",
    "n_items": "int64",
    "n_prompts": "int64",
    "alpha_observed": "float64",
    "alpha_observed_ci_low": "float64",
    "alpha_observed_ci_high": "float64",
    "alpha_calibrated": "float64",
    "alpha_calibrated_ci_low": "float64",
    "alpha_calibrated_ci_high": "float64",
    "correctable_share": "float64",
    "n_boot": "int64",
    "notes": "string",
}


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


def value_counts(
    items: np.ndarray, values: np.ndarray, weights: np.ndarray | None = None
) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    """Items x distinct values count matrix (krippendorff's value_counts, sparse: an
    item holds a few of the values) and the value domain; ``items`` are integer item
    codes 0..n_items-1; ``weights``: how many labels each (item, value) row stands
    for (1 each when the rows are labels)."""
    domain, value_code = np.unique(values, return_inverse=True)
    n_items = int(items.max()) + 1 if items.size else 0
    data = np.ones(items.size) if weights is None else np.asarray(weights, dtype=float)
    counts = scipy.sparse.csr_matrix(
        (data, (items, value_code.ravel())), shape=(n_items, domain.size)
    )
    counts.sum_duplicates()
    return counts, domain


def _positions(domain: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray | None:
    """Each value's position on the line whose squared differences are Krippendorff's
    distances, as the krippendorff package defines them: the value itself
    (interval), its pairable counts' cumulative midpoint (ordinal: the sum of the
    counts from one value to the other, less half of each end's, is the difference
    of the midpoints), None for nominal (distance 1 between any two values)."""
    if level == "nominal":
        return None
    if level == "interval":
        return domain
    return np.cumsum(n_v) - n_v / 2.0


def krippendorff_alpha(counts: scipy.sparse.csr_matrix, domain: np.ndarray, level: str) -> float:
    """Krippendorff's alpha from the items x values counts of pairable items (two or
    more values each): equal to ``krippendorff.alpha(value_counts=...)``, without the
    package's items x values x values array (1,000 score levels made that 8 GB per
    thousand items) and without a dense values x values matrix (continuous scores of
    10,000 levels made that 5.6 GB, review19e).

    o = sum over items of (n_u n_u' - diag(n_u)) / (m_u - 1) (sparse: the pairs of
    values met in one item), n = o's column sums, alpha = 1 - (N - 1) sum(o d) /
    sum(n n' d); every distance d is a squared difference of positions (nominal: 1
    off the diagonal) and zero on it, so the diagonals drop out and sum(n n' d) is
    2 N sum(n (p - mean p)^2), or N^2 - sum(n^2) for nominal."""
    m = np.asarray(counts.sum(axis=1)).ravel()
    weighted = scipy.sparse.diags(1.0 / (m - 1.0)) @ counts
    o = (weighted.T @ counts).tocoo()
    # o's column sums less its diagonal: the pairable values' counts, exactly
    n_v = np.asarray(counts.sum(axis=0)).ravel()
    if np.count_nonzero(n_v) < 2:  # every pairable label one value: undefined
        return float("nan")
    total = n_v.sum()
    p = _positions(domain.astype(float), n_v, level)
    off = o.row != o.col
    if p is None:
        observed = float(o.data[off].sum())
        expected = float(total**2 - (n_v**2).sum())
    else:
        observed = float((o.data[off] * (p[o.row[off]] - p[o.col[off]]) ** 2).sum())
        centred = p - (n_v * p).sum() / total  # no cancellation of two large sums
        centred -= (n_v * centred).sum() / total  # the mean's rounding (review19f)
        expected = float(2.0 * total * (n_v * centred**2).sum())
    if expected == 0:  # underflow (values of 1e-300): undefined, as numpy's 0 / 0 was
        return float("nan")
    return float(1.0 - (total - 1.0) * observed / expected)


def _weights(labels: pd.DataFrame) -> np.ndarray:
    """Labels each row stands for: its ``n_labels`` (value counts), else 1 (a label)."""
    if "n_labels" in labels:
        return labels["n_labels"].to_numpy(dtype=float)
    return np.ones(len(labels))


def annotator_agreement(
    labels: pd.DataFrame, item_cols: list[str], n_annotators: int | None = None
) -> dict[str, object]:
    """Alpha at three levels and observed agreement over ``labels``: one row per label
    (with ``annotator_id``), or per item and value with the number of labels in
    ``n_labels`` (then ``n_annotators`` is given); a ``score`` column; items are
    identified by ``item_cols``. Labels without a score (not applicable) are left
    out; ``annotator_agreement_from_counts`` counts them in its notes."""
    labels = labels.dropna(subset=["score"])
    items = labels.groupby(item_cols, sort=False).ngroup().to_numpy()
    scores = labels["score"].to_numpy(dtype=float)
    weights = _weights(labels)
    counts, domain = value_counts(items, scores, weights)
    n_per_item = np.asarray(counts.sum(axis=1)).ravel()
    pairable = n_per_item >= 2
    all_agree = np.asarray(counts.max(axis=1).todense()).ravel() == n_per_item
    if n_annotators is None:
        n_annotators = int(labels["annotator_id"].nunique())
    out: dict[str, object] = {
        "n_items": int(pairable.sum()),
        "n_annotators": int(n_annotators),
        "n_labels": int(round(weights.sum())),
        "observed_agreement": float(all_agree[pairable].mean()) if pairable.any() else None,
    }
    for level in LEVELS:
        if not pairable.any() or len(domain) < 2:
            out[f"alpha_{level}"] = None
            continue
        out[f"alpha_{level}"] = krippendorff_alpha(counts[pairable], domain, level)
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
        "gk_gamma": (
            gamma,
            (max(-1.0, gamma - Z95 * gamma_se), min(1.0, gamma + Z95 * gamma_se)),
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


def _weighted_mean(frame: pd.DataFrame, keys: list[str], value: str) -> pd.Series:
    """Per ``keys``, the mean of ``value`` over labels (rows weighted by n_labels)."""
    w = frame.assign(_w=_weights(frame), _wv=_weights(frame) * frame[value])
    sums = w.groupby(keys)[["_wv", "_w"]].sum()
    return sums["_wv"] / sums["_w"]


def gold_agreement(labels: pd.DataFrame, gold: pd.DataFrame, item: list[str]) -> dict[str, object]:
    """Against expert (gold) labels: the gold range of an item is [min, max] of its
    expert scores; accuracy is the share of annotator labels inside it, and the
    Spearman correlation pairs the annotators' and the experts' mean per item.
    Rows are labels, or values with their counts in ``n_labels``."""
    gold = gold.dropna(subset=["score"])
    if gold.empty:
        return {"n_gold_items": 0, "gold_accuracy": None, "gold_spearman": None}
    ranges = gold.groupby(item)["score"].agg(["min", "max"])
    ranges["mean"] = _weighted_mean(gold, item, "score")
    joined = labels.dropna(subset=["score"]).join(ranges, on=item, how="inner")
    inside = (joined["score"] >= joined["min"]) & (joined["score"] <= joined["max"])
    weights = _weights(joined)
    means = pd.DataFrame(
        {
            "annotators": _weighted_mean(joined, item, "score"),
            "gold": joined.groupby(item)["mean"].first(),
        }
    )
    # ranks on means rounded to 12 decimals: equal means (equal fractions of label
    # sums) tie, whatever order their float sums were added in
    spearman = (
        float(stats.spearmanr(means["annotators"].round(12), means["gold"].round(12)).statistic)
        if len(means) >= GOLD_SPEARMAN_ITEMS
        else None
    )
    return {
        "n_gold_items": int(len(means)),
        "gold_accuracy": float((inside * weights).sum() / weights.sum()) if len(joined) else None,
        "gold_spearman": spearman,
    }


GOLD_SPEARMAN_ITEMS = 3  # gold_agreement's Spearman needs more than two items


def _gold_note(row: Mapping[str, object], gold: pd.DataFrame) -> str | None:
    """Why gold_accuracy or gold_spearman is null on an agreement_annotators row
    (gold_agreement's row, ``gold`` the dimension's expert labels), None when both
    are numbers."""
    n_gold = int(row["n_gold_items"])  # type: ignore[call-overload]
    if n_gold == 0:
        if not gold["score"].notna().any():
            return "no expert (gold) labels: gold_accuracy and gold_spearman null"
        return (
            "no item has both expert (gold) and annotator labels: "
            "gold_accuracy and gold_spearman null"
        )
    if n_gold < GOLD_SPEARMAN_ITEMS:
        return (
            f"gold_spearman needs {GOLD_SPEARMAN_ITEMS} items with expert (gold) labels, "
            f"{n_gold} here: null"
        )
    if not _is_number(row["gold_spearman"]):
        return "gold_spearman undefined: the annotators' or the experts' item means do not vary"
    return None


ANNOTATOR_COUNT_KEYS = [
    "dimension", "prompt_id", "model", "is_expert", "is_pre_aggregated",
    "human_score", "scale_min", "scale_max",
]  # fmt: skip


def _is_number(value: object) -> bool:
    """A finite alpha (not None, not NaN)."""
    return value is not None and bool(np.isfinite(float(value)))  # type: ignore[arg-type]


def annotator_label_counts(labels: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """From accepted label rows, what the SQL models int_annotator_label_counts and
    int_annotator_ids compute: labels per (item, flags, score, scale) in
    ``n_labels``, and the distinct (dimension, annotator_id) of the per-annotator
    labels with a score (the rows route of ``annotator_agreement_table``)."""
    flagged = labels.assign(
        is_expert=(labels["role"] == "expert").to_numpy(dtype=bool),
        is_pre_aggregated=(labels["n_aggregated"].fillna(1) > 1).to_numpy(dtype=bool),
    )
    counts = (
        flagged.groupby(ANNOTATOR_COUNT_KEYS, dropna=False, sort=False)
        .size()
        .rename("n_labels")
        .reset_index()
    )
    usable = ~flagged["is_expert"] & ~flagged["is_pre_aggregated"] & flagged["human_score"].notna()
    annotators = flagged.loc[usable, ["dimension", "annotator_id"]].drop_duplicates()
    return counts, annotators


def annotator_agreement_table(labels: pd.DataFrame) -> pd.DataFrame:
    """agreement_annotators from the accepted label rows of
    int_human_annotations_checked (``annotator_agreement_from_counts`` on their
    counts)."""
    return annotator_agreement_from_counts(*annotator_label_counts(labels))


def annotator_agreement_from_counts(
    counts: pd.DataFrame, annotators: pd.DataFrame, levels: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """agreement_annotators: per dimension on the raw scores, and pooled ('all')
    on the normalised scores, from the label counts per item and value
    (int_annotator_label_counts) and the annotators per dimension
    (int_annotator_ids). Pre-aggregated labels (n_aggregated > 1) are not
    per-annotator data: they are left out, and a dimension with nothing else says so.
    ``levels`` (dimension -> level of measurement) chooses the headline ``alpha``
    (``with_headline_alpha``)."""
    item = ["prompt_id", "model", "dimension"]
    counts = counts.assign(
        is_expert=counts["is_expert"].astype(bool),
        is_pre_aggregated=counts["is_pre_aggregated"].astype(bool),
        n_labels=counts["n_labels"].astype("int64"),
        human_score=pd.to_numeric(counts["human_score"]).astype(float),
    )
    experts = counts[counts["is_expert"]].rename(columns={"human_score": "score"})
    labels = counts[~counts["is_expert"]]
    pre = labels["is_pre_aggregated"]
    usable = labels[~pre].rename(columns={"human_score": "score"})
    rows = []
    dims = sorted(labels["dimension"].unique())

    def normalised(frame: pd.DataFrame) -> pd.DataFrame:
        span = frame["scale_max"] - frame["scale_min"]
        return frame.assign(score=(frame["score"] - frame["scale_min"]) / span)

    for dimension in [*dims, "all"]:
        if dimension == "all":  # pooled over scales: normalised scores
            part, gold = normalised(usable), normalised(experts)
            n_annotators = annotators["annotator_id"].nunique()
            n_pre = labels.loc[pre, "n_labels"].sum()
        else:
            part = usable[usable["dimension"] == dimension]
            gold = experts[experts["dimension"] == dimension]
            n_annotators = annotators.loc[
                annotators["dimension"] == dimension, "annotator_id"
            ].nunique()
            n_pre = labels.loc[pre & (labels["dimension"] == dimension), "n_labels"].sum()
        # labels marked not applicable ("NA: ...") have no score: int_annotator_label_counts
        # keeps them (human_score null) so that they are counted here, then left out
        n_na = int(part.loc[part["score"].isna(), "n_labels"].sum())
        n_gold_na = int(gold.loc[gold["score"].isna(), "n_labels"].sum())
        row: dict[str, object] = {"dimension": dimension}
        row |= annotator_agreement(part, item, n_annotators) if part["score"].notna().any() else {
            "n_items": 0, "n_annotators": 0, "n_labels": 0, "observed_agreement": None,
            **{f"alpha_{lvl}": None for lvl in LEVELS},
        }  # fmt: skip
        row |= gold_agreement(part, gold, item)
        notes = []
        if n_pre:
            notes.append(
                f"{int(n_pre)} pre-aggregated labels (means of several annotators) left out: "
                "per-annotator labels are absent for them"
            )
        if n_na:
            notes.append(f"{n_na} labels marked not applicable (NA) have no score: left out")
        if n_gold_na:
            notes.append(
                f"{n_gold_na} expert labels marked not applicable (NA) have no score: "
                "left out of the gold range"
            )
        if row["n_items"] == 0:
            notes.append("no item has two per-annotator labels: agreement cannot be computed")
        elif undefined := [lvl for lvl in LEVELS if not _is_number(row[f"alpha_{lvl}"])]:
            notes.append(
                f"alpha undefined ({', '.join(f'alpha_{lvl}' for lvl in undefined)} null): "
                "the paired labels do not vary (one value), so no disagreement is expected by "
                "chance (0 / 0); observed_agreement says how often the annotators agreed"
            )
        if gold_note := _gold_note(row, gold):
            notes.append(gold_note)
        row["notes"] = "; ".join(notes) or None
        rows.append(row)
    out = pd.DataFrame(rows)
    out["notes"] = out["notes"].astype("string")
    return with_headline_alpha(out, levels)
