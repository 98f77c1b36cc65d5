"""Report sections on the autograder GLMs: forest plots of the grader, model and
interaction effects (self contrasts marked), the model comparison, and the
observed vs posterior vs counterfactual agreement."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from judge_bias.report.base import (
    Panel,
    Warehouse,
    attach_table,
    draw_interval,
    new_figure,
    panel,
    percent,
    tab10_colours,
    zero_line,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

RATING_MODELS = ("grader_model", "items", "hierarchical", "grader_type")
SELF_COLOUR = "tab:red"
ROWS = (
    ("grader", "grader effects"),
    ("model", "model effects"),
    ("grader_model", "grader x model interactions"),
    ("self", "self contrasts"),
)


def _forest(ax: Axes, frame: pd.DataFrame, labels: list[str], marked: list[bool]) -> None:
    """One HDI per row of ``frame`` (mean, hdi_low, hdi_high), top to bottom;
    marked rows (a judge on its own model, self contrasts) in red diamonds."""
    n = len(frame)
    for i, (row, mark) in enumerate(zip(frame.itertuples(), marked, strict=True)):
        excludes_zero = row.hdi_low > 0 or row.hdi_high < 0
        colour = SELF_COLOUR if mark else "0.25"
        draw_interval(ax, n - 1 - i, row.mean, row.hdi_low, row.hdi_high, colour, excludes_zero,
                  "D" if mark else "o", 5)  # fmt: skip
    ax.set_yticks(range(n), labels[::-1], fontsize=7)
    ax.set_ylim(-0.6, max(n, 1) - 0.4)
    ax.grid(axis="x", alpha=0.3)
    zero_line(ax)


def _effects_figure(df: pd.DataFrame, dimensions: list[str], level: float) -> Figure:
    # a kind of term no dimension has (no interaction without two models) gets no row
    rows = [(t, title) for t, title in ROWS if (df["term_type"] == t).any()] or list(ROWS[:1])
    sizes = [max(len(df[(df["dimension"] == d) & (df["term_type"] == t)]) for d in dimensions)
             for t, _ in rows]  # fmt: skip
    fig = new_figure(4.2 * len(dimensions) + 1.5, 0.18 * sum(sizes) + 1.6 * len(rows) + 0.8)
    axes = fig.subplots(len(rows), len(dimensions), squeeze=False,
                        gridspec_kw={"height_ratios": [max(s, 1) + 3 for s in sizes]})  # fmt: skip
    for c, dim in enumerate(dimensions):
        for r, (term, title) in enumerate(rows):
            ax = axes[r, c]
            part = df[(df["dimension"] == dim) & (df["term_type"] == term)]
            if part.empty:
                ax.set_visible(False)
                continue
            if term == "grader_model":
                labels = [f"{g} -> {m}" for g, m in zip(part.grader, part.rated_model, strict=True)]
                marked = list(part["grader"] == part["rated_model"])
            else:
                labels = list(part["rated_model"] if term == "model" else part["grader"])
                marked = [term == "self"] * len(part)
            _forest(ax, part, labels, marked)
            ax.set_title(f"{dim}: {title}", fontsize=9)
    fig.suptitle(
        f"posterior means, {percent(level)} HDIs (log-odds; filled: HDI excludes 0); "
        "red diamonds: a judge on its own model, and the self contrasts",
        fontsize=9,
    )
    return fig


@panel(140)
def panel_glm_effects(wh: Warehouse) -> Panel:
    p = Panel(
        "glm_effects",
        "Autograder GLM: grader, model and interaction effects",
        caption=(
            "Posterior means and highest-density intervals of the rating GLM (grader_model "
            "when fitted), per dimension, on the log-odds scale of the ordered logistic: "
            "positive = higher scores. Effects are effect-coded (they sum to zero over "
            "graders, over models, and over each row and column of the interaction). Red "
            "diamonds mark each judge's interaction on its own model and its self contrast "
            "(own-model interaction minus its mean interaction on the other models)."
        ),
    )
    if reason := wh.missing("glm_effects"):
        p.absent = reason
        return p
    df = wh.df("select * from glm_effects")
    fitted = [m for m in RATING_MODELS if m in set(df["model"])]
    if not fitted:
        p.absent = "glm_effects has no rating model"
        return p
    level = float(df["ci_level"].iloc[0])  # the marts' setting; one value a build
    df = df[(df["model"] == fitted[0]) & df["term_type"].isin([t for t, _ in ROWS])]
    df = df.sort_values(["dimension", "term_type", "grader", "rated_model"])
    dimensions = sorted(df["dimension"].unique())
    p.figure = _effects_figure(df, dimensions, level)
    show = ["dimension", "term_type", "grader", "rated_model", "mean", "sd", "hdi_low", "hdi_high"]
    attach_table(p, df[df["term_type"] == "self"][[*show, "r_hat", "fit_status"]])
    return p


@panel(142)
def panel_glm_comparison(wh: Warehouse) -> Panel:
    p = Panel(
        "glm_comparison",
        "Autograder GLM: model comparison by PSIS-LOO",
        caption=(
            "elpd_loo (expected log predictive density, higher is better) with its standard "
            "error, per model and dimension; models of one family (ordinal rating models, "
            "binary pairwise models) are compared within a dimension and the preferred one "
            "is drawn as a star. A difference under about 2 se_d_elpd is no clear preference."
        ),
    )
    if reason := wh.missing("glm_model_comparison"):
        p.absent = reason
        return p
    df = wh.df("select * from glm_model_comparison where elpd_loo is not null")
    if df.empty:
        p.absent = "glm_model_comparison has no fitted model"
        return p
    groups = sorted(df.groupby(["dimension", "family_of_models"]).groups)
    fig = new_figure(4.0 * min(len(groups), 3) + 1, 1.6 + 2.2 * ((len(groups) + 2) // 3))
    axes = fig.subplots((len(groups) + 2) // 3, min(len(groups), 3), squeeze=False).ravel()
    for ax, (dim, fam) in zip(axes, groups, strict=False):
        part = df[(df["dimension"] == dim) & (df["family_of_models"] == fam)].sort_values("rank")
        for i, row in enumerate(part.itertuples()):
            se = 0.0 if pd.isna(row.se) else row.se
            draw_interval(ax, len(part) - 1 - i, row.elpd_loo, row.elpd_loo - se, row.elpd_loo + se,
                      "tab:blue" if row.preferred else "0.4", True,
                      "*" if row.preferred else "o", 11 if row.preferred else 6)  # fmt: skip
        ax.set_yticks(range(len(part)), list(part["model"])[::-1], fontsize=8)
        ax.set_ylim(-0.6, len(part) - 0.4)
        ax.set_title(f"{dim} ({fam})", fontsize=9)
        ax.set_xlabel("elpd_loo +- se", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes[len(groups) :]:
        ax.set_visible(False)
    p.figure = fig
    show = ["dimension", "model", "elpd_loo", "se", "p_loo", "d_elpd", "se_d_elpd"]
    attach_table(p, df[[*show, "pareto_k_bad", "preferred", "status"]])
    return p


@panel(144)
def panel_glm_agreement(wh: Warehouse) -> Panel:
    p = Panel(
        "glm_agreement",
        "Autograder GLM: agreement observed, replicated and without grader effects",
        caption=(
            "Krippendorff's alpha (ordinal) per dimension: the observed alpha (black line), "
            "and over posterior draws the alpha of replicated scores (posterior) and of "
            "scores with the grader main effects removed before the cutpoints "
            "(counterfactual, paper section 2.4). Violins show the alphas of every draw "
            "(glm_agreement_draws), ticks their 5%, 50% and 95% quantiles. A "
            "counterfactual well above the posterior means the graders' leniency differences "
            "cost agreement."
        ),
    )
    if reason := wh.missing("glm_agreement"):
        p.absent = reason
        return p
    df = wh.df("select * from glm_agreement")
    draws = None
    if wh.missing("glm_agreement_draws") is None:
        draws = wh.df("select * from glm_agreement_draws where alpha is not null")
    else:  # a warehouse built before the draws mart: the stored quantiles as boxes
        p.caption = p.caption.replace(
            "Violins show the alphas of every draw (glm_agreement_draws), ticks their 5%, "
            "50% and 95% quantiles.",
            "Boxes span the 25-75% quantiles, whiskers 5-95%, the line is the median "
            "(this warehouse has no glm_agreement_draws).",
        )
    dims = sorted(df["dimension"].unique())
    fig = new_figure(2.2 * len(dims) + 2.5, 3.6)
    ax = fig.subplots()
    colours = {"posterior": tab10_colours()[0], "counterfactual": tab10_colours()[1]}
    for i, dim in enumerate(dims):
        part = df[df["dimension"] == dim].set_index("kind")
        if "observed" in part.index:
            obs = float(part.loc["observed", "mean"])
            ax.hlines(obs, i - 0.4, i + 0.4, color="black", linewidth=2,
                      label="observed" if i == 0 else "_nolegend_")  # fmt: skip
        for k, (kind, colour) in enumerate(colours.items()):
            at = i - 0.18 + 0.36 * k
            label = kind if i == 0 else "_nolegend_"
            if draws is not None:
                values = draws.loc[(draws["dimension"] == dim) & (draws["kind"] == kind), "alpha"]
                if len(values) >= 2:
                    _violin(ax, values.to_numpy(float), at, colour, label)
                continue
            if kind in part.index:
                _quantile_box(ax, part.loc[kind], at, colour, label)
    ax.set_xticks(range(len(dims)), dims)
    ax.set_xlim(-0.6, len(dims) - 0.4)
    ax.set_ylabel("Krippendorff's alpha (ordinal)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside: clear of the lines
    p.figure = fig
    cols = ["dimension", "kind", "model", "mean", "q05", "q50", "q95", "n_units"]
    # why an alpha is null (constant scores), when a row says (older warehouses: no column)
    cols += ["notes"] if "notes" in df and df["notes"].notna().any() else []
    attach_table(p, df[cols])
    return p


def _violin(ax: Axes, values: np.ndarray, at: float, colour, label: str) -> None:
    parts = ax.violinplot([values], positions=[at], widths=0.32, showextrema=False,
                          quantiles=[[0.05, 0.5, 0.95]])  # fmt: skip
    bodies: list = list(parts["bodies"])  # type: ignore[call-overload]  # (stubs say Collection)
    for body in bodies:
        body.set_facecolor(colour)
        body.set_edgecolor(colour)
        body.set_alpha(0.6)
        body.set_label(label)
    parts["cquantiles"].set_color(colour)


def _quantile_box(ax: Axes, r: pd.Series, at: float, colour, label: str) -> None:
    stats = [{"med": r.q50, "q1": r.q25, "q3": r.q75, "whislo": r.q05, "whishi": r.q95,
              "label": ""}]  # fmt: skip
    box = ax.bxp(stats, positions=[at], widths=0.3, showfliers=False, patch_artist=True)
    for patch in box["boxes"]:
        patch.set_facecolor(colour)
        patch.set_alpha(0.6)
    box["boxes"][0].set_label(label)
