"""What the analyses fit from: the sufficient statistics (per cell, per prompt, per rating
for HC3) read from the warehouse's aggregate tables or computed from a fact frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_bias.bias.gam import reference_stats_from_rows
from judge_bias.bias.settings import Settings
from judge_bias.bias.sufficient import stats_from_rows
from judge_bias.limits import STATS_BYTES_PER_ROW, compact_frame

FACT_COLUMNS = [
    "judge",
    "judge_family",
    "model",
    "model_family",
    "prompt_id",
    "dataset",
    "task_type",
    "dimension",
    "framing",
    "judge_score",
    "judge_score_norm",
    "human_score_norm",
    "is_self",
    "is_same_family",
    "length_feature",
]


KEPT_MODELS = "_judge_bias_kept_models"  # a registered table of model names (read_statistics)


# a rating read for HC3 (17 columns as Python objects) and its row statistics
RATING_BYTES = 17 * 80 + 45 * 8


# The statistics each standard-error type needs (judge_bias.bias.sufficient): per
# cell for HC0/HC1, per cell and prompt for cluster, per rating for HC3.
GRAIN = {"HC0": "cell", "HC1": "cell", "cluster": "prompt", "HC3": "row"}


ORDINAL_COLUMNS = [
    "dimension",
    "judge",
    "judge_family",
    "is_self",
    "is_same_family",
    "judge_score",
    "reference",
]


@dataclass
class FitInputs:
    """What the analyses read: a stats frame (human and LLM references), the mean
    human reference of each model's completions and the distinct ordinal rows."""

    stats: pd.DataFrame
    model_means: pd.Series
    ordinal: pd.DataFrame
    # standard error of each model's mean human reference (None: not known)
    model_se: pd.Series | None = None
    # how many models and judges leave_one_out would leave out in turn, when the
    # statistics were read with the other models merged (read_statistics)
    n_left_out: int | None = None
    # human-reference statistics keyed also by the reference value, for the gam
    # fit when the main statistics are cell-grain (None: ``human`` has one
    # reference per row, at prompt or row grain)
    reference_stats: pd.DataFrame | None = None
    reference_note: str | None = None  # why reference_stats could not be read

    @property
    def human(self) -> pd.DataFrame:
        return self.stats[self.stats["reference_kind"] == "human"]

    def llm(self, family: str) -> pd.DataFrame:
        s = self.stats
        return s[(s["reference_kind"] == "llm") & (s["reference_family"] == family)]


def prepare(fct: pd.DataFrame) -> pd.DataFrame:
    """Positive-frame ratings with both scores; rating and reference named as in the paper."""
    keep = (
        (fct["framing"] == "positive")
        & fct["judge_score_norm"].notna()
        & fct["human_score_norm"].notna()
    )
    df = fct.loc[keep].copy()
    df["rating"] = df["judge_score_norm"].astype(float)
    df["reference"] = df["human_score_norm"].astype(float)
    df["is_self"] = df["is_self"].astype(bool)
    df["is_same_family"] = df["is_same_family"].astype(bool)
    return df.reset_index(drop=True)


def llm_reference_data(df: pd.DataFrame, family: str) -> tuple[pd.DataFrame, str]:
    """Rows for the llm_reference fit of ``family`` and a note of what was removed.

    The reference becomes the mean normalised score the family's judges gave
    the completion; the family's judgments and its models' completions are
    removed; completions its judges did not rate drop out.
    """
    completion = ["prompt_id", "model", "dimension"]
    ref = (
        df[df["judge_family"] == family]
        .groupby(completion, as_index=False)["rating"]
        .mean()
        .rename(columns={"rating": "reference"})
    )
    rest = df[(df["judge_family"] != family) & (df["model_family"] != family)]
    out = rest.drop(columns="reference").merge(ref, on=completion, how="inner")
    note = (
        f"reference = mean score of the {family} judges; removed "
        f"{int((df['judge_family'] == family).sum())} ratings by {family} judges and "
        f"{int(((df['judge_family'] != family) & (df['model_family'] == family)).sum())} "
        f"further ratings of {family} completions; {len(rest) - len(out)} ratings of "
        f"completions the {family} judges did not rate"
    )
    return out, note


def completion_means(df: pd.DataFrame) -> pd.Series:
    """Mean human reference of each model's completions (prepared rows), by model."""
    per_completion = df.drop_duplicates(["prompt_id", "model", "dimension"])
    return per_completion.groupby("model")["reference"].mean()


def completion_mean_se(df: pd.DataFrame) -> pd.Series:
    """Standard error of completion_means (sample sd / sqrt(completions)), by model."""
    per_completion = df.drop_duplicates(["prompt_id", "model", "dimension"])
    grouped = per_completion.groupby("model")["reference"]
    return grouped.std(ddof=1) / np.sqrt(grouped.size())


def to_12_digits(x: float) -> float:
    """``x`` rounded to 12 significant digits: a mean or sum whose last bits depend on
    the order DuckDB or pandas added its terms in is the same number either way
    (0.9650087499999997 and 0.9650087500000001 are both 0.96500875)."""
    return float(f"{float(x):.12g}")


def weakest_models(model_means: pd.Series, s: Settings) -> list[str]:
    """The explicit list when given, else the k models with the lowest mean human score
    (ties broken by name; means equal to 12 significant digits are ties, whatever
    order their sums were added in)."""
    if s.weakest_models:
        return list(s.weakest_models)
    ranked = model_means.map(to_12_digits).sort_index().sort_values(kind="stable")
    return list(ranked.index[: s.weakest_k])


def with_llm_references(df: pd.DataFrame) -> pd.DataFrame:
    """Prepared rows with the human reference, then for each judge family the rows
    of its llm_reference fit (as int_bias_ratings builds them in the warehouse)."""
    parts = [df.assign(reference_kind="human", reference_family=None)]
    for family in sorted(df["judge_family"].unique()):
        data, _ = llm_reference_data(df, family)
        parts.append(data.assign(reference_kind="llm", reference_family=family))
    return pd.concat(parts, ignore_index=True)


def inputs_from_fact(fct: pd.DataFrame, se_type: str = "HC0") -> FitInputs:
    """The fit inputs computed in memory from a fct_judge_ratings DataFrame."""
    df = prepare(fct)
    stats = stats_from_rows(with_llm_references(df), GRAIN[se_type])
    ordinal_rows = df.groupby(ORDINAL_COLUMNS, dropna=False).size().rename("n_rows").reset_index()
    reference = reference_stats_from_rows(df) if GRAIN[se_type] == "cell" else None
    return FitInputs(
        stats, completion_means(df), ordinal_rows, model_se=completion_mean_se(df),
        reference_stats=reference,
    )  # fmt: skip


def inputs_from_tables(
    stats: pd.DataFrame,
    model_means: pd.DataFrame,
    ordinal_rows: pd.DataFrame,
    n_left_out: int | None = None,
    reference_stats: pd.DataFrame | None = None,
) -> FitInputs:
    """The fit inputs from the warehouse's tables (int_bias_cell_stats or
    int_bias_prompt_stats, int_bias_model_means, int_bias_ordinal_counts; with
    cell-grain statistics, int_bias_reference_stats for the gam fit)."""
    by_model = model_means.set_index("model")
    means = by_model["mean_reference"].astype(float)
    se = None
    if "sd_reference" in by_model:
        se = by_model["sd_reference"].astype(float) / np.sqrt(by_model["n_completions"])
    return FitInputs(stats, means, ordinal_rows, model_se=se, n_left_out=n_left_out,
                     reference_stats=reference_stats)  # fmt: skip


def read_statistics(
    stats, grain: str, model_means: pd.DataFrame, settings: Settings, connection
) -> tuple[pd.DataFrame | None, int | None, str | None]:
    """The statistics relation of ``grain`` (int_bias_cell_stats, int_bias_prompt_stats,
    or int_bias_ratings for ``row``) as a DataFrame, within the budget:
    (stats, n_left_out, note); over the budget (None, None, note).

    ``model`` is a key of the statistics only for leave_one_out and without_weakest;
    with many models it multiplies the rows (1 prompt x 100,000 models: 1.5 million).
    When leave_one_out would be skipped anyway (more models and judges than
    max_fits), every model but the weakest is merged into one null model in the
    database: the moments are sums, so every other fit is unchanged, and
    n_left_out keeps leave_one_out's count. Model names stay data (a registered
    table), never SQL text."""
    if grain == "row":
        n_rows = stats.aggregate("count(*)").fetchall()[0][0]
        note = settings.budget.rows(f"reading {n_rows:,} ratings", n_rows, RATING_BYTES)
        return (None if note else stats_from_rows(stats.df(), "row")), None, note
    names = stats.aggregate("model as name").union(stats.aggregate("judge as name"))
    n_left_out = names.distinct().aggregate("count(*)").fetchall()[0][0]
    merged = n_left_out > settings.budget.max_fits
    if merged:
        means = model_means.set_index("model")["mean_reference"].astype(float)
        kept = pd.Series(weakest_models(means, settings), dtype=object, name="kept_model")
        connection.register(KEPT_MODELS, kept.to_frame())
        columns = [
            f"case when model in (select kept_model from {KEPT_MODELS}) then model end as model"
            if name == "model"
            else (f"cast(sum({name}) as {kind}) as {name}" if name.startswith("m_y") else name)
            for name, kind in zip(stats.columns, stats.types, strict=True)
        ]
        sql = f"select {', '.join(columns)} from _judge_bias_stats group by all"
        stats = stats.query("_judge_bias_stats", sql)
    try:
        n_rows = stats.aggregate("count(*)").fetchall()[0][0]
        what = f"reading {n_rows:,} rows of statistics"
        note = settings.budget.rows(what, n_rows, STATS_BYTES_PER_ROW)
        frame = None if note else compact_frame(stats)
    finally:
        if merged:
            connection.unregister(KEPT_MODELS)
    return frame, (n_left_out if merged else None), note
