"""Agreement between annotators: Krippendorff's alpha (nominal, ordinal, interval)
from per-item value counts, equal to the ``krippendorff`` package's (the tests'
reference); observed agreement = share of items with at least two labels where all
agree; agreement with expert (gold) labels; the agreement_annotators mart from the
label counts.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.sparse
from scipy import stats

from judge_bias.agreement.headline_alpha import LEVELS, with_headline_alpha
from judge_bias.stats.scalars import is_finite_number

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
    out; ``annotator_agreement_from_counts`` counts them in its notes. Items are
    numbered in the sorted order of ``item_cols`` (first column first), not by
    appearance: any order of the same rows gives the same result, bit for bit."""
    labels = labels.dropna(subset=["score"])
    items = labels.groupby(item_cols, sort=True).ngroup().to_numpy()
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
    scored = labels.dropna(subset=["score"])
    # no scored label (all pre-aggregated or NA): pandas' join of an empty frame
    # keeps the keys as an index level too, which _weighted_mean cannot group by
    if gold.empty or scored.empty:
        return {"n_gold_items": 0, "gold_accuracy": None, "gold_spearman": None}
    ranges = gold.groupby(item)["score"].agg(["min", "max"])
    ranges["mean"] = _weighted_mean(gold, item, "score")
    joined = scored.join(ranges, on=item, how="inner")
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
    annotators, experts = means["annotators"].round(12), means["gold"].round(12)
    spearman: float | None = None
    if len(means) >= GOLD_SPEARMAN_ITEMS:
        # a side that does not vary: NaN as scipy gives it, without scipy's
        # ConstantInputWarning in the build log (_gold_note says it in the mart;
        # no process-wide warnings.catch_warnings: dbt runs Python models in threads)
        if annotators.nunique() < 2 or experts.nunique() < 2:
            spearman = float("nan")
        else:
            spearman = float(stats.spearmanr(annotators, experts).statistic)
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
        # the annotators' side is the scored per-annotator labels: pre-aggregated
        # and NA labels on the gold items do not count
        return (
            "no item has both expert (gold) labels and scored per-annotator labels: "
            "gold_accuracy and gold_spearman null"
        )
    if n_gold < GOLD_SPEARMAN_ITEMS:
        return (
            f"gold_spearman needs {GOLD_SPEARMAN_ITEMS} items with expert (gold) labels, "
            f"{n_gold} here: null"
        )
    if not is_finite_number(row["gold_spearman"]):
        return "gold_spearman undefined: the annotators' or the experts' item means do not vary"
    return None


ANNOTATOR_COUNT_KEYS = [
    "dimension", "prompt_id", "model", "is_expert", "is_pre_aggregated",
    "human_score", "scale_min", "scale_max",
]  # fmt: skip


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
    by_dimension = ["dimension", "prompt_id", "model"]
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
        # items numbered dimension first: the order marts.label_counts sorts its rows in
        scored = part["score"].notna().any()
        row |= annotator_agreement(part, by_dimension, n_annotators) if scored else {
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
        elif undefined := [lvl for lvl in LEVELS if not is_finite_number(row[f"alpha_{lvl}"])]:
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
