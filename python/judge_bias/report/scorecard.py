"""Report sections of the judge scorecard and the cross-family panel (issue 16):
tables read from judge_scorecard and panel_leaderboard, placed right after
"What is significant"; and the line naming the GLM fits that failed or warn
(``failed_fits_html``, beside "Not supported by this data")."""

from __future__ import annotations

from judge_bias.report.base import Panel, Warehouse, attach_table, esc, panel
from judge_bias.warehouse.glm_fit_status import glm_fit_problems

SCORECARD_COLUMNS = [
    "judge",
    "verdict",
    "verdict_reasons",
    "spearman",
    "spearman_ci_low",
    "spearman_ci_high",
    "pairwise_accuracy",
    "pairwise_accuracy_ci_low",
    "pairwise_accuracy_ci_high",
    "pairwise_kappa",
    "self_bias",
    "self_bias_ci_low",
    "self_bias_ci_high",
    "family_bias",
    "family_bias_ci_low",
    "family_bias_ci_high",
    "position_consistency",
    "position_consistency_ci_low",
    "position_consistency_ci_high",
    "robustness_rate",
    "robustness_rate_ci_low",
    "robustness_rate_ci_high",
    "robustness_bias_type",
    "invalid_output_rate",
    "invalid_output_rate_ci_low",
    "invalid_output_rate_ci_high",
    "verdict_rule",
]
PANEL_COLUMNS = [
    "model",
    "panel_judges",
    "panel_score",
    "panel_score_ci_low",
    "panel_score_ci_high",
    "panel_rank",
    "panel_score_debiased",
    "panel_score_debiased_ci_low",
    "panel_score_debiased_ci_high",
    "panel_debiased_rank",
    "all_judges_rank",
    "human_score",
    "human_rank",
]


@panel(5)  # right after What is significant
def panel_scorecard(wh: Warehouse) -> Panel:
    p = Panel(
        "scorecard",
        "Judge scorecard: which judge to trust",
        caption=(
            "Each judge pooled over dimensions (judge_scorecard, dimension `all`; the "
            "per-dimension rows are in the mart): the verdict and what triggered it, with "
            "the evidence beside it. Spearman with humans (95% interval), self- and "
            "family-bias of the main fit ({pct} interval), position consistency in pairwise "
            "verdicts and the robustness of the perturbation type with the lowest upper "
            "bound (95%; verdict_reasons names every fragile type), the share of "
            "unreadable outputs. A judge whose agreement interval is too wide, or with no "
            "agreement with humans, is insufficient evidence, with the reason. The rule "
            "(docs/scorecard.md) is in verdict_rule."
        ),
    )
    if reason := wh.missing("judge_scorecard"):
        p.absent = reason
        return p
    df = wh.df("select * from judge_scorecard where dimension = 'all' order by judge")
    if df.empty:
        p.absent = "judge_scorecard has no pooled (dimension = 'all') rows"
        return p
    level = df["bias_ci_level"].dropna()
    p.caption = p.caption.format(pct=f"{level.iloc[0]:.0%}" if len(level) else "Wald")
    attach_table(p, df[[c for c in SCORECARD_COLUMNS if c in df.columns]])
    return p


@panel(6)
def panel_cross_family(wh: Warehouse) -> Panel:
    p = Panel(
        "cross_family_panel",
        "Models scored by a panel of judges from other families",
        caption=(
            "panel_leaderboard, all dimensions pooled: each model's mean score from the "
            "judges of the other families only (each judge weighs the same), raw and "
            "mapped to the human scale with each judge's main-fit offset and slope "
            "(debiased), with the rank given by all judges (same family included) and the "
            "human mean and rank beside it; rank 1 = best. Intervals are 95%, "
            "prompt-clustered."
        ),
    )
    if reason := wh.missing("panel_leaderboard"):
        p.absent = reason
        return p
    df = wh.df(
        "select * from panel_leaderboard where dimension = 'all' "
        "order by panel_rank nulls last, model"
    )
    attach_table(p, df[[c for c in PANEL_COLUMNS if c in df.columns]])
    return p


def failed_fits_html(wh: Warehouse) -> str:
    """The GLM fits of glm_fits with status error (failed) or warning, by name with
    the reason, as one paragraph for the report's "not supported / failed" line;
    empty when there is none (or no glm_fits)."""
    problems = glm_fit_problems(wh.con)
    if not problems:
        return ""
    parts = []
    for status, lead in (("error", "GLM fits failed"), ("warning", "GLM fits with warnings")):
        named = [
            f"<b>{esc(p.model)}</b> on {esc(p.dimension)}" + (f" ({esc(p.note)})" if p.note else "")
            for p in problems
            if p.status == status
        ]
        if named:
            parts.append(f"{lead}: {'; '.join(named)}")
    return f'<p class="failed-fits">{". ".join(parts)}.</p>'
