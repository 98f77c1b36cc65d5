"""Report panels for pairwise bias measured against human verdicts: accuracy,
invalid verdicts, position consistency with invalid verdicts, P(prefer longer),
the conditional first-slot rate and length slope (pairwise_bias), and the joint
self/length logistic fit (pairwise_joint_bias)."""

from __future__ import annotations

from judge_bias.report.base import Panel, Warehouse, attach_table, panel
from judge_bias.report.pairwise import metric_grid, ordered_judges

HUMAN_METRICS = {
    "accuracy": ("accuracy vs human", 1.0, "share of verdicts equal to the human's"),
    "invalid_rate": ("invalid verdicts", 0.0, "share of unparseable verdicts"),
    "position_consistency_invalid_inconsistent": (
        "position consistency (invalid = inconsistent)", 1.0, "same verdict both orders",
    ),
    "p_prefer_longer": ("P(prefer longer), judge", 0.5, "decisive verdicts for the longer"),
    "human_p_prefer_longer": ("P(prefer longer), humans", 0.5, "human verdicts for the longer"),
    "first_slot_rate_given_human": (
        "first-slot rate given the human verdict", 0.5, "expit of the position term",
    ),
    "length_slope_given_human": (
        "length slope given the human verdict", 0.0, "beyond what humans prefer (log-odds)",
    ),
}  # fmt: skip
JOINT_METRICS = {
    "self_preference_logodds": ("self-preference (joint)", 0.0, "log-odds to own, length fixed"),
    "length_slope": ("length preference (joint)", 0.0, "log-odds per unit, own fixed"),
    "position_logodds": ("first slot (joint)", 0.0, "log-odds of the first slot"),
    "human_verdict_logodds": ("follows the human (joint)", 0.0, "log-odds per human verdict"),
}


@panel(112)
def panel_pairwise_human(wh: Warehouse) -> Panel:
    p = Panel(
        "pairwise_human",
        "Pairwise verdicts against the human verdicts",
        caption=(
            "One plot per measure, one dot per judge (pooled over opponents), bars are 95% "
            "intervals (prompt-clustered); the dashed line marks a judge that agrees with the "
            "humans, never fails to answer, or has no slot or length preference. The length "
            "slope given the human verdict is the judge's length preference beyond what the "
            "humans prefer; compare the judges' P(prefer longer) with the humans'."
        ),
    )
    if reason := wh.missing("pairwise_bias", source="pairwise_judgments"):
        p.absent = reason
        return p
    cols = wh.columns("pairwise_bias")
    if "accuracy" not in cols:
        p.absent = "pairwise_bias has no human-verdict columns"
        return p
    df = wh.df("select * from pairwise_bias where opponent = 'all'")
    metrics = {m: v for m, v in HUMAN_METRICS.items() if m in df and df[m].notna().any()}
    if df.empty or not metrics or df["n_human_judgments"].fillna(0).sum() == 0:
        p.absent = "no pairwise judgment has a human verdict"
        return p
    p.figure = metric_grid(df, ordered_judges(wh, df), "judge", metrics)
    show = ["judge", "n_judgments", "n_invalid", "n_human_judgments", "kappa",
            "position_consistency_llmbar", "accuracy_with_invalid", *metrics]  # fmt: skip
    show += [f"{m}_{end}" for m in metrics for end in ("ci_low", "ci_high")]
    attach_table(p, df[[c for c in show if c in df]])
    return p


@panel(114)
def panel_pairwise_joint(wh: Warehouse) -> Panel:
    p = Panel(
        "pairwise_joint",
        "Self-preference and length preference in one fit",
        caption=(
            "Per judge, one logistic fit of choosing the first slot on the own-completion "
            "indicator, the length feature, the position and (when every row has one) the "
            "human verdict: each coefficient holds the others fixed. Bars are 95% Wald "
            "intervals with prompt-clustered standard errors; 0 = no effect. The table puts "
            "the marginal self-preference rate and unconditional length slope beside them."
        ),
    )
    if reason := wh.missing("pairwise_joint_bias", source="pairwise_judgments"):
        p.absent = reason
        return p
    df = wh.df("select * from pairwise_joint_bias")
    metrics = {m: v for m, v in JOINT_METRICS.items() if df[m].notna().any()}
    if not metrics:
        p.absent = "no judge's joint fit could be estimated"
        return p
    p.figure = metric_grid(df, ordered_judges(wh, df), "judge", metrics)
    show = ["judge", "n_judgments", "n_own_judgments", *metrics]
    show += [f"{m}_{end}" for m in metrics for end in ("ci_low", "ci_high")]
    show += ["self_preference_rate", "length_slope_unconditional", "notes", "ci_method"]
    attach_table(p, df[show])
    return p
