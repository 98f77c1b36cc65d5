"""Report sections on the bias regressions: forest plots, per dimension, the judge x model
heatmap, the robustness variants and the debiased leaderboard.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.typing import ColorType
from judge_bias.report.base import (
    HUMAN,
    ROBUSTNESS_VARIANTS,
    UNIT,
    Panel,
    Warehouse,
    bias_ci_level,
    draw_interval,
    family_colours,
    judge_families,
    new_figure,
    panel,
    percent,
    significance_legend,
    tab10_colours,
    zero_line,
)


@panel(10)
def panel_forest(wh: Warehouse) -> Panel:
    p = Panel(
        "forest",
        "Self-bias and family-bias (main fit)",
        caption=(
            "Each dot is how much more (right of the dashed zero line) or less (left) a judge "
            "scores its own model's completions (left panel) or the other models of its family "
            "(right panel) than the human reference predicts, in {unit}; bars are {pct} "
            "intervals, filled dots are significant (the interval excludes 0), colours are "
            "families."
        ),
    )
    if reason := wh.missing("bias_estimates"):
        p.absent = reason
        return p
    est = wh.df(
        "select term_type, judge, family, estimate, ci_low, ci_high, significant "
        "from bias_estimates where analysis = 'main' and slice = 'all' "
        "and term_type in ('self', 'family')"
    )
    if est.empty:
        p.absent = "the main fit has no self- or family-bias estimates" + _fit_note(wh, "main")
        return p
    level = bias_ci_level(wh)
    p.caption = p.caption.format(unit=UNIT, pct=percent(level))
    judges = judge_families(wh)
    colours = family_colours(list(judges["family"]) + list(est["family"].dropna()))
    self_est = est[est.term_type == "self"].set_index("judge")
    fam_est = est[est.term_type == "family"].set_index("family")
    families = sorted(set(judges["family"]) | set(fam_est.index))
    n = max(len(judges), len(families), 1)
    fig = new_figure(11, 1.6 + 0.42 * n)
    ax1, ax2 = fig.subplots(1, 2, sharex=True)
    labels = []
    for i, row in judges.iloc[::-1].reset_index(drop=True).iterrows():
        labels.append(row.judge)
        if row.judge in self_est.index:
            r = self_est.loc[row.judge]
            draw_interval(
                ax1, i, r.estimate, r.ci_low, r.ci_high, colours[row.family], r.significant
            )
        else:
            ax1.text(0, i, "not estimable", ha="center", va="center", fontsize=8, color="0.4")
    ax1.set_yticks(range(len(labels)), labels)
    ax1.set_title("Self-bias per judge (own model)")
    fam_labels = []
    for i, f in enumerate(families[::-1]):
        fam_labels.append(f)
        if f in fam_est.index:
            r = fam_est.loc[f]
            draw_interval(ax2, i, r.estimate, r.ci_low, r.ci_high, colours[f], r.significant)
        else:
            ax2.text(0, i, "not estimable", ha="center", va="center", fontsize=8, color="0.4")
    ax2.set_yticks(range(len(fam_labels)), fam_labels)
    ax2.set_title("Family-bias per family (its other models)")
    for ax in (ax1, ax2):
        zero_line(ax)
        ax.set_xlabel(f"bias estimate ({percent(level)} interval), normalised score units")
        ax.grid(axis="x", alpha=0.3)
        ax.set_ylim(-0.7, max(len(ax.get_yticks()), 1) - 0.3)
    ax1.set_ylabel("judge")
    ax2.set_ylabel("judge family")
    significance_legend(fig, {f: colours[f] for f in sorted(set(judges["family"]))}, level)
    p.figure = fig
    return p


def _fit_note(wh: Warehouse, analysis: str) -> str:
    if "bias_fits" not in wh.tables:
        return ""
    notes = wh.df(
        f"select slice, notes from bias_fits where analysis = '{analysis}' and notes is not null"
    )
    if notes.empty:
        return ""
    return " (bias_fits notes: " + "; ".join(notes["notes"].astype(str)) + ")"


@panel(20)
def panel_by_dimension(wh: Warehouse) -> Panel:
    p = Panel(
        "by_dimension",
        "Self-bias per judge, fitted separately for each dimension",
        caption=(
            "One small plot per evaluation dimension (the regression refitted on that "
            "dimension's ratings only): dots are each judge's self-bias in {unit}, bars "
            "{pct} intervals, filled = significant, colours = judge family; compare a judge's "
            "dot across the plots to see on which dimensions it favours itself."
        ),
    )
    if reason := wh.missing("bias_estimates"):
        p.absent = reason
        return p
    est = wh.df(
        "select slice as dimension, judge, family, estimate, ci_low, ci_high, significant "
        "from bias_estimates where analysis = 'by_dimension' and term_type = 'self'"
    )
    if est.empty:
        p.absent = "no per-dimension self-bias estimates" + _fit_note(wh, "by_dimension")
        return p
    level = bias_ci_level(wh)
    p.caption = p.caption.format(unit=UNIT, pct=percent(level))
    judges = judge_families(wh)
    judges = judges[judges.judge.isin(est.judge)].reset_index(drop=True)
    colours = family_colours(list(judges["family"]))
    dims = sorted(est["dimension"].unique())
    ncols = min(len(dims), 4)
    nrows = math.ceil(len(dims) / ncols)
    fig = new_figure(max(9.5, 3.2 * ncols + 2.2), (0.9 + 0.36 * len(judges)) * nrows + 0.9)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    order = list(judges.judge[::-1])
    for ax, dim in zip(axes, dims, strict=False):
        sub = est[est.dimension == dim].set_index("judge")
        for i, j in enumerate(order):
            if j in sub.index:
                r = sub.loc[j]
                fam = judges.set_index("judge").loc[j, "family"]
                draw_interval(ax, i, r.estimate, r.ci_low, r.ci_high, colours[fam], r.significant)
        zero_line(ax)
        ax.set_title(str(dim))
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(range(len(order)), order)
        ax.set_ylim(-0.7, len(order) - 0.3)
        ax.set_xlabel(f"self-bias, score units ({percent(level)} interval)", fontsize=9)
    for ax in axes[len(dims) :]:
        ax.set_visible(False)
    significance_legend(fig, colours, level)
    p.figure = fig
    return p


def heatmap_data(wh: Warehouse) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """Judge x model mean scores (dimension 'all') with the human row, and the same grid
    min-max normalised within each row (0.5 where a row is constant)."""
    agg = wh.df(
        "select judge, judge_family, model, model_family, mean_judge_score_norm as score "
        "from agg_judge_model_scores where dimension = 'all'"
    )
    if agg.empty:
        return None
    human = pd.DataFrame(columns=["model", "score"])
    if "fct_judge_ratings" in wh.tables:
        # Each completion x dimension counts once, whichever judges rated it.
        human = wh.df(
            "select model, avg(human_score_norm) as score from (select distinct prompt_id, "
            "model, dimension, human_score_norm from fct_judge_ratings "
            "where human_score_norm is not null) group by model"
        )
    judges = (
        agg[["judge", "judge_family"]]
        .drop_duplicates("judge")
        .sort_values(["judge_family", "judge"])["judge"]
        .tolist()
    )
    models = (
        agg[["model", "model_family"]]
        .drop_duplicates("model")
        .sort_values(["model_family", "model"])["model"]
        .tolist()
    )
    grid = agg.pivot(index="judge", columns="model", values="score").reindex(
        index=judges, columns=models
    )
    if not human.empty:
        grid.loc[HUMAN] = human.set_index("model")["score"].reindex(models)
    lo = grid.min(axis=1)
    span = grid.max(axis=1) - lo
    norm = grid.sub(lo, axis=0).div(span.where(span > 0), axis=0).fillna(0.5)
    norm = norm.where(grid.notna())
    return grid, norm


@panel(30)
def panel_heatmap(wh: Warehouse) -> Panel:
    p = Panel(
        "heatmap",
        "Mean score each judge gives each model (all dimensions)",
        caption=(
            "Rows are judges (and the human reference, bottom), columns the rated models; the "
            "number in a cell is the mean normalised score (0-1) and the colour its position "
            "within the row (yellow = the row's highest mean, dark blue = its lowest), so a row "
            "reads as that judge's ranking; boxed cells are a judge rating its own model."
        ),
    )
    if reason := wh.missing("agg_judge_model_scores"):
        p.absent = reason
        return p
    data = heatmap_data(wh)
    if data is None:
        p.absent = "agg_judge_model_scores has no pooled (dimension = 'all') rows"
        return p
    grid, norm = data
    models = list(grid.columns)
    span = grid.max(axis=1) - grid.min(axis=1)
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle

    cmap = colormaps["viridis"]
    # Two decimals unless some row's means are too close to tell apart with two.
    digits = 3 if (span.dropna() < 0.05).any() else 2
    fig = new_figure(2.6 + 0.95 * len(models), 1.8 + 0.5 * len(grid))
    ax = fig.subplots()
    im = ax.imshow(norm.to_numpy(dtype=float), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for i, row in enumerate(grid.index):
        for k, m in enumerate(models):
            v = grid.iat[i, k]
            if pd.isna(v):
                ax.text(k, i, "-", ha="center", va="center", fontsize=8, color="0.5")
                continue
            r, g, b, _ = cmap(norm.iat[i, k])
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.55
            ax.text(
                k,
                i,
                f"{v:.{digits}f}",
                ha="center",
                va="center",
                fontsize=9,
                color="white" if dark else "black",
            )
            if row == m:
                ax.add_patch(
                    Rectangle(
                        (k - 0.47, i - 0.47),
                        0.94,
                        0.94,
                        fill=False,
                        edgecolor="red",
                        linewidth=2.5,
                        linestyle="--",
                    )
                )
    if HUMAN in grid.index:
        ax.axhline(len(grid) - 1.5, color="white", linewidth=4)
    ax.set_xticks(range(len(models)), models, rotation=35, ha="right")
    ax.set_yticks(range(len(grid)), list(grid.index))
    ax.set_xlabel("rated model")
    ax.set_ylabel("judge")
    ax.set_title(
        "Mean normalised score (cell text); colour normalised within each row;\n"
        "red dashed box: the judge rating its own model",
        fontsize=10,
    )
    bar = fig.colorbar(im, ax=ax, shrink=0.8)
    bar.set_ticks([0, 1], labels=["row's\nlowest", "row's\nhighest"])
    p.figure = fig
    return p


def variant_label(analysis: str, slice_: str) -> str:
    if analysis == "main":
        return "main fit"
    if analysis == "length_controlled":
        return "length-controlled"
    if analysis == "without_weakest":
        return "without the weakest models"
    if analysis == "gam":
        return "spline of the reference (GAM)"
    return f"LLM reference: {slice_} judges' mean"


@panel(40)
def panel_robustness(wh: Warehouse) -> Panel:
    p = Panel(
        "robustness",
        "Main fit beside its robustness variants",
        caption=(
            "For each judge (left) and family (right), the main-fit estimate (black diamond) "
            "and the same bias refitted with a length control, with a spline of the reference "
            "(gam), with another family's judges as "
            "the reference instead of humans, and without the weakest models; "
            "{pct} intervals, filled = significant, a missing marker means that variant could "
            "not estimate the term (e.g. its family was removed to build the reference). "
            "A bias is robust when its markers stay on the same side of zero."
        ),
    )
    if reason := wh.missing("bias_estimates"):
        p.absent = reason
        return p
    variants = ", ".join(f"'{v}'" for v in ROBUSTNESS_VARIANTS)
    est = wh.df(
        "select analysis, slice, term_type, judge, family, estimate, ci_low, ci_high, "
        f"significant from bias_estimates where analysis in ({variants}) "
        "and term_type in ('self', 'family')"
    )
    if est.empty or set(est["analysis"]) <= {"main"}:
        p.absent = "no robustness variant has self- or family-bias estimates"
        return p
    level = bias_ci_level(wh)
    p.caption = p.caption.format(pct=percent(level))
    order = {v: i for i, v in enumerate(ROBUSTNESS_VARIANTS)}
    keys = (
        est[["analysis", "slice"]]
        .drop_duplicates()
        .assign(o=lambda d: d["analysis"].map(order))
        .sort_values(["o", "slice"])
    )
    variants_list = [(r.analysis, r.slice) for r in keys.itertuples()]
    from matplotlib import colormaps

    palette = tab10_colours()
    n_ref = sum(a == "llm_reference" for a, _ in variants_list)
    style: dict[tuple[str, str], tuple[ColorType, str]] = {}
    ref_i = 0
    for a, s in variants_list:
        if a == "main":
            style[(a, s)] = ("black", "D")
        elif a == "length_controlled":
            style[(a, s)] = (palette[0], "o")
        elif a == "without_weakest":
            style[(a, s)] = (palette[2], "^")
        elif a == "gam":  # judge_bias.bias.gam: spline of the reference
            style[(a, s)] = (palette[1], "v")
        else:
            style[(a, s)] = (colormaps["plasma"](0.15 + 0.7 * ref_i / max(n_ref - 1, 1)), "s")
            ref_i += 1
    judges = [j for j in judge_families(wh)["judge"] if j in set(est["judge"].dropna())]
    families = sorted(set(est.loc[est.term_type == "family", "family"].dropna()))
    nv = len(variants_list)
    step = 0.8 / max(nv, 1)
    rows = max(len(judges), len(families), 1)
    fig = new_figure(12, 1.8 + rows * (0.22 + 0.13 * nv))
    ax1, ax2 = fig.subplots(1, 2, sharex=True)
    for ax, term, names, col in (
        (ax1, "self", judges, "judge"),
        (ax2, "family", families, "family"),
    ):
        sub = est[est.term_type == term]
        ordered = names[::-1]
        for i, name in enumerate(ordered):
            for v, (a, s) in enumerate(variants_list):
                hit = sub[(sub[col] == name) & (sub.analysis == a) & (sub.slice == s)]
                if hit.empty:
                    continue
                r = hit.iloc[0]
                colour, marker = style[(a, s)]
                y = i + 0.4 - step / 2 - v * step
                draw_interval(
                    ax, y, r.estimate, r.ci_low, r.ci_high, colour, bool(r.significant), marker, 5
                )
            if i:
                ax.axhline(i - 0.5, color="0.85", linewidth=0.8)
        ax.set_yticks(range(len(ordered)), ordered)
        ax.set_ylim(-0.6, max(len(ordered), 1) - 0.4)
        zero_line(ax)
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel(f"bias estimate ({percent(level)} interval), normalised score units")
    ax1.set_title("Self-bias per judge")
    ax2.set_title("Family-bias per family")
    ax1.set_ylabel("judge")
    ax2.set_ylabel("judge family")
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [],
            [],
            marker=style[k][1],
            color=style[k][0],
            linestyle="",
            markersize=6,
            label=variant_label(*k),
        )
        for k in variants_list
    ]
    handles.append(
        Line2D(
            [],
            [],
            marker="o",
            color="0.3",
            markerfacecolor="white",
            linestyle="",
            label="hollow: not significant",
        )
    )
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4), fontsize=8)
    p.figure = fig
    return p
