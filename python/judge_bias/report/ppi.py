"""Report panel: each model's mean human score from few labels (stratified PPI++),
beside the human-only estimate and the judges' own (biased) mean."""

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


@panel(130)
def panel_ppi(wh: Warehouse) -> Panel:
    p = Panel(
        "ppi_model_scores",
        "Model scores on the human scale from few human labels (stratified PPI++)",
        caption=(
            "Per model, its mean human score (0-1, all dimensions) estimated from the human "
            "labels and the panel of all judges' ratings of the unlabelled completions "
            "(stratified PPI++), beside the human-only estimate from the labels alone and the "
            "judges' own mean (no interval: biased by the judges' biases). A PPI++ interval "
            "narrower than the human-only one is the judges' contribution (ess_gain = the "
            "ratio of their variances). Intervals are skewness-corrected (Hall), so they "
            "reach further down when scores pile up at the top of the scale."
        ),
    )
    if reason := wh.missing("ppi_model_scores", source="human_annotations"):
        p.absent = reason
        return p
    df = wh.df(
        "select model, estimate, ci_low, ci_high, classical_estimate, classical_ci_low, "
        "classical_ci_high, judge_mean, ess_gain, n_labelled, n_unlabelled, ci_level, notes "
        "from ppi_model_scores where is_panel and dimension = 'all' and model <> 'all' "
        "order by estimate desc nulls last, model"
    )
    if df.empty or df["estimate"].isna().all():
        p.absent = "ppi_model_scores has no estimate for the panel of judges (see its notes)"
        return p
    level = float(df["ci_level"].iloc[0])
    models = list(df["model"])
    fig = new_figure(9, 1.6 + 0.5 * len(models))
    ax = fig.subplots()
    dodged_intervals(
        ax,
        models,
        [
            ("stratified PPI++ (labels + judges)", df, "estimate", "ci_low", "ci_high"),
            (
                "human labels only",
                df,
                "classical_estimate",
                "classical_ci_low",
                "classical_ci_high",
            ),
            ("judges only (biased)", df, "judge_mean", "judge_mean", "judge_mean"),
        ],  # fmt: skip
        "model",
    )
    ax.set_xlabel(f"mean human score, normalised 0-1 ({percent(level)} interval)")
    ax.set_ylabel("model")
    ax.set_title("Each model's mean human score, all dimensions")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    p.figure = fig
    table = df.rename(
        columns={
            "estimate": "ppi_estimate",
            "ci_low": "ppi_estimate_ci_low",
            "ci_high": "ppi_estimate_ci_high",
            "classical_estimate": "human_only",
            "classical_ci_low": "human_only_ci_low",
            "classical_ci_high": "human_only_ci_high",
        }
    ).drop(columns=["ci_level"])
    table["notes"] = table["notes"].fillna("")
    attach_table(p, table)
    return p
