"""Report sections on pairwise judgments and perturbations."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure
from judge_bias.report.base import (
    PAIRWISE_METRICS,
    Panel,
    Warehouse,
    attach_table,
    dodged_intervals,
    judge_families,
    new_figure,
    panel,
    zero_line,
)


@panel(100)
def panel_pairwise(wh: Warehouse) -> Panel:
    p = Panel(
        "pairwise",
        "Pairwise verdicts: position and self-preference biases",
        caption=(
            "One plot per measure, one dot per judge (pooled over opponents), bars are the "
            "intervals stored with the measure; the dashed line marks an unbiased judge "
            "(0.5 for rates of picking a slot or itself, 1 for position consistency, 0 for the "
            "equal-opportunity bias and the length slope)."
        ),
    )
    if reason := wh.missing("pairwise_bias", source="pairwise_judgments"):
        p.absent = reason
        return p
    cols = wh.columns("pairwise_bias")
    where = " where opponent = 'all'" if "opponent" in cols else ""
    df = wh.df(f"select * from pairwise_bias{where}")
    metrics = [m for m in PAIRWISE_METRICS if m in cols and df[m].notna().any()]
    if df.empty or not metrics:
        p.absent = "pairwise_bias has no pooled rows with a measure"
        return p
    p.figure = _pairwise_figure(df, ordered_judges(wh, df), "judge", metrics)
    p.caption += _ties_half_caption(metrics)
    show = ["judge", *[c for c in ("n_pairs", *metrics) if c in df.columns]]
    show += [f"{m}_{end}" for m in metrics for end in ("ci_low", "ci_high") if f"{m}_{end}" in df]
    attach_table(p, df[[*show, *(c for c in ("ci_method",) if c in df)]])
    return p


def metric_grid(
    df: pd.DataFrame, names: list[str], key: str, metrics: dict[str, tuple[str, float, str]]
) -> Figure:
    """One plot per measure (``metrics``: column -> label, the unbiased value drawn
    dashed, what it means), one interval per name (a judge, or a judge and an
    opponent) from the column's ``_ci_low`` / ``_ci_high``."""
    ncols = min(len(metrics), 3)
    nrows = math.ceil(len(metrics) / ncols)
    fig = new_figure(4 * ncols + 2.5, (1.2 + 0.4 * len(names)) * nrows + 0.5)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    for ax, (m, (label, ref, meaning)) in zip(axes, metrics.items(), strict=False):
        dodged_intervals(ax, names, [(label, df, m, f"{m}_ci_low", f"{m}_ci_high")], key)
        zero_line(ax, ref)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel(meaning, fontsize=8)
    for ax in axes[::ncols]:
        ax.set_ylabel(key)
    for ax in axes[len(metrics) :]:
        ax.set_visible(False)
    return fig


def _pairwise_figure(df: pd.DataFrame, names: list[str], key: str, metrics: list[str]) -> Figure:
    return metric_grid(df, names, key, {m: PAIRWISE_METRICS[m] for m in metrics})


# the two self-preference rates: what sets them apart, worded by which is shown
TIES_HALF_CAPTION = (
    " Self-preference rate, ties half (self_preference_rate_ties_half): a tie counts "
    "half a win, AlpacaEval's rule; "
)


def _ties_half_caption(metrics: list[str]) -> str:
    if "self_preference_rate_ties_half" not in metrics:
        return ""
    if "self_preference_rate" in metrics:
        return TIES_HALF_CAPTION + "the self-preference rate beside it leaves ties out."
    return TIES_HALF_CAPTION + (
        "the self-preference rate, which leaves ties out, is not shown: every verdict "
        "on a judge's own pairs is a tie."
    )


def ordered_judges(wh: Warehouse, df: pd.DataFrame) -> list[str]:
    """The judges of ``df`` in the report's judge order, unknown ones last by name."""
    judges = [j for j in judge_families(wh)["judge"] if j in set(df.judge)]
    return judges + sorted(set(df.judge) - set(judges))


@panel(110)
def panel_pairwise_opponents(wh: Warehouse) -> Panel:
    p = Panel(
        "pairwise_opponents",
        "Pairwise verdicts per opponent: each judge against each other model",
        caption=(
            "The measures of the pooled panel, one dot per judge and opponent (the other "
            "model of pairs that contain the judge's own model), bars are the intervals "
            "stored with the measure; the dashed line marks an unbiased judge."
        ),
    )
    if reason := wh.missing("pairwise_bias", source="pairwise_judgments"):
        p.absent = reason
        return p
    if "opponent" not in wh.columns("pairwise_bias"):
        p.absent = "pairwise_bias has no opponent column"
        return p
    df = wh.df("select * from pairwise_bias where opponent <> 'all' order by judge, opponent")
    metrics = [m for m in PAIRWISE_METRICS if m in df.columns and df[m].notna().any()]
    if df.empty or not metrics:
        p.absent = "no pair contains a judge's own model, so there is no per-opponent row"
        return p
    df["judge vs opponent"] = df["judge"] + " vs " + df["opponent"]
    p.figure = _pairwise_figure(df, list(df["judge vs opponent"]), "judge vs opponent", metrics)
    p.caption += _ties_half_caption(metrics)
    show = ["judge", "opponent", *[c for c in ("n_pairs", "n_judgments", *metrics) if c in df]]
    show += [f"{m}_{end}" for m in metrics for end in ("ci_low", "ci_high") if f"{m}_{end}" in df]
    attach_table(p, df[[*show, *(c for c in ("ci_method",) if c in df)]])
    return p


@panel(120)
def panel_perturbation(wh: Warehouse) -> Panel:
    p = Panel(
        "perturbation",
        "Perturbation robustness (CALM)",
        caption=(
            "Robustness rate per judge (rows) and bias type (columns): the share of verdicts "
            "unchanged after the bias perturbation (1 = fully robust; darker = less robust). "
            "Score-based bias types (those with an error rate, e.g. self-enhancement) are "
            "measured by their error rate |perturbed - original| / original in the table, "
            "which gives every measure."
        ),
    )
    if reason := wh.missing("perturbation_bias", source="perturbation_judgments"):
        p.absent = reason
        return p
    df = wh.df("select * from perturbation_bias")
    verdicts = df
    if "error_rate" in df.columns:  # score-based types: exact score equality means little
        scored = df.groupby("bias_type")["error_rate"].transform(lambda e: e.notna().any())
        verdicts = df[~scored.astype(bool)]
    if "robustness_rate" in verdicts.columns and verdicts["robustness_rate"].notna().any():
        grid = verdicts.pivot_table(index="judge", columns="bias_type", values="robustness_rate")
        fig = new_figure(2.8 + 1.2 * grid.shape[1], 1.6 + 0.45 * grid.shape[0])
        ax = fig.subplots()
        im = ax.imshow(grid.to_numpy(dtype=float), cmap="magma", vmin=0, vmax=1, aspect="auto")
        for i in range(grid.shape[0]):
            for k in range(grid.shape[1]):
                v = grid.iat[i, k]
                if not pd.isna(v):
                    ax.text(
                        k,
                        i,
                        f"{v:.2f}",
                        ha="center",
                        va="center",
                        fontsize=9,
                        color="white" if v < 0.6 else "black",
                    )
        ax.set_xticks(range(grid.shape[1]), list(grid.columns), rotation=30, ha="right")
        ax.set_yticks(range(grid.shape[0]), list(grid.index))
        ax.set_xlabel("bias type (perturbation)")
        ax.set_ylabel("judge")
        ax.set_title("Robustness rate (share of verdicts unchanged)")
        fig.colorbar(im, ax=ax, label="robustness rate")
        p.figure = fig
    else:
        p.caption = "The table gives every measure (no robustness rate to draw)."
    attach_table(p, df.drop(columns=[c for c in df if c.startswith("n_") and c != "n_items"]))
    return p
