"""Report panels: is model A better than model B on the human scale (model_comparisons:
the PPI difference paired by prompt, beside the human-only and the judges' own), and
how many human labels a target precision needs (label_budget)."""

from __future__ import annotations

from judge_bias.report.base import (
    Panel,
    Warehouse,
    attach_table,
    dodged_intervals,
    new_figure,
    panel,
    percent,
)

MAX_PAIRS = 30  # the figure shows the pairs with the largest differences


@panel(134)
def panel_model_comparisons(wh: Warehouse) -> Panel:
    p = Panel(
        "model_comparisons",
        "Which model is better on the human scale (paired differences)",
        caption=(
            "Per pair of models (A - B), the difference of their mean human scores (0-1, all "
            "dimensions) from the human labels and the panel of judges (stratified PPI++, "
            "paired by prompt), beside the human-only difference and the judges' own (biased "
            "by whatever they favour). p_holm and p_bh adjust across the pairs. A judges-only "
            "interval away from the PPI one is the judges' bias moving the comparison."
        ),
    )
    if reason := wh.missing("model_comparisons", source="human_annotations"):
        p.absent = reason
        return p
    df = wh.df(
        "select model_a || ' - ' || model_b as pair, difference, ci_low, ci_high, "
        "human_only_difference, human_only_ci_low, human_only_ci_high, judge_only_difference, "
        "judge_only_ci_low, judge_only_ci_high, p_value_holm as p_holm, p_value_bh as p_bh, "
        "min_detectable_difference, n_labelled_a, n_labelled_b, ci_level, notes "
        "from model_comparisons where is_panel and dimension = 'all' "
        f"order by abs(difference) desc nulls last, pair limit {MAX_PAIRS}"
    )
    if df.empty or df["difference"].isna().all():
        p.absent = "model_comparisons has no estimate for the panel of judges (see its notes)"
        return p
    level = float(df["ci_level"].iloc[0])
    pairs = list(df["pair"])
    fig = new_figure(9, 1.6 + 0.45 * len(pairs))
    ax = fig.subplots()
    dodged_intervals(
        ax,
        pairs,
        [
            ("PPI++ (labels + judges)", df, "difference", "ci_low", "ci_high"),
            (
                "human labels only",
                df,
                "human_only_difference",
                "human_only_ci_low",
                "human_only_ci_high",
            ),
            (
                "judges only (biased)",
                df,
                "judge_only_difference",
                "judge_only_ci_low",
                "judge_only_ci_high",
            ),
        ],  # fmt: skip
        "pair",
    )
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel(f"difference of mean human scores, A - B ({percent(level)} interval)")
    ax.set_title("Model pairs, all dimensions")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    p.figure = fig
    table = df.drop(columns=["ci_level"])
    table["notes"] = table["notes"].fillna("")
    attach_table(p, table)
    return p


@panel(136)
def panel_label_budget(wh: Warehouse) -> Panel:
    p = Panel(
        "label_budget",
        "Human labels needed for a target precision",
        caption=(
            "Per model and dimension, the human labels an interval of the target half-width "
            "needs with the panel of judges (PPI++) and without them, from the measured "
            "variances; the minimum detectable difference with the labels you have."
        ),
    )
    if reason := wh.missing("label_budget", source="human_annotations"):
        p.absent = reason
        return p
    df = wh.df(
        "select model, dimension, target_half_width, labels_needed, labels_needed_human_only, "
        "labels_saved, best_judge, labels_needed_best_judge, n_labelled, n_units, "
        "min_detectable_difference from label_budget order by model, dimension"
    )
    attach_table(p, df)
    return p
