"""Report panels: did the judge change (judge_drift), does it repeat itself
(judge_stability), and its binary and graded agreement with the humans
(agreement_binary). Tables only; docs/drift.md has the definitions."""

from __future__ import annotations

from judge_bias.report.base import Panel, Warehouse, attach_table, panel, percent


def _level(wh: Warehouse, table: str) -> str:
    rows = wh.df(f"select max(ci_level) as level from {table}")
    return percent(float(rows["level"].iloc[0]))


@panel(92)
def panel_agreement_binary(wh: Warehouse) -> Panel:
    p = Panel(
        "agreement_binary",
        "Pass/fail and graded agreement with the humans",
        caption=(
            "A rating passes when its normalised score is at least the pass threshold; the "
            "human verdict is the mean human score against the same threshold. Sensitivity "
            "and specificity (prompt-clustered Wilson), Gwet's AC1 (robust to a dominant "
            "class) and the quadratic-weighted kappa of the graded scores (prompt "
            "bootstrap); the Rogan-Gladen pass rate corrects the judge's pass rate over "
            "every rating for its measured error rates."
        ),
    )
    if reason := wh.missing("agreement_binary", source="human_annotations"):
        p.absent = reason
        return p
    df = wh.df(
        "select judge, dimension, n_labelled, sensitivity, sensitivity_ci_low, "
        "sensitivity_ci_high, specificity, specificity_ci_low, specificity_ci_high, gwet_ac1, "
        "gwet_ac1_ci_low, gwet_ac1_ci_high, qwk, qwk_ci_low, qwk_ci_high, judge_pass_rate, "
        "rg_pass_rate, rg_pass_rate_ci_low, rg_pass_rate_ci_high, notes "
        "from agreement_binary where dimension = 'all' or judge not in "
        "(select judge from agreement_binary where dimension = 'all') order by judge, dimension"
    )
    p.caption += f" Intervals at {_level(wh, 'agreement_binary')}."
    df["notes"] = df["notes"].fillna("")
    attach_table(p, df)
    return p


@panel(94)
def panel_judge_drift(wh: Warehouse) -> Panel:
    p = Panel(
        "judge_drift",
        "Did the judge change? Versions compared on shared items",
        caption=(
            "Each judge version against its previous version (models file, "
            "previous_version) on the items both rated: the mean shift of the normalised "
            "score, their quadratic-weighted kappa, the share of pass/fail verdicts that "
            "flipped and the change in accuracy against the humans. The drift flag fires "
            "when the shift or the accuracy change is significant and at least "
            "drift_min_shift, or when the flip rate's lower bound exceeds "
            "drift_max_flip_rate (docs/drift.md)."
        ),
    )
    if reason := wh.missing("judge_drift", source="models"):
        p.absent = reason + "; declare versions with the models file's previous_version"
        return p
    df = wh.df(
        "select judge_before, judge_after, dimension, n_items, mean_shift, mean_shift_ci_low, "
        "mean_shift_ci_high, qwk, qwk_ci_low, qwk_ci_high, pass_flip_rate, "
        "pass_flip_rate_ci_low, pass_flip_rate_ci_high, accuracy_change, "
        "accuracy_change_ci_low, accuracy_change_ci_high, drift_flag, drift_reasons, notes "
        "from judge_drift order by drift_flag desc, judge_after, dimension"
    )
    p.caption += f" Intervals at {_level(wh, 'judge_drift')}."
    df["drift_flag"] = df["drift_flag"].map({True: "DRIFT", False: ""})
    df[["drift_reasons", "notes"]] = df[["drift_reasons", "notes"]].fillna("")
    attach_table(p, df)
    return p


@panel(96)
def panel_judge_stability(wh: Warehouse) -> Panel:
    p = Panel(
        "judge_stability",
        "Is the judge stable? Reruns of the same item",
        caption=(
            "From items a judge rated in two runs or more (run_id): the chance that two "
            "runs give different scores, the share of items whose pass/fail verdict "
            "crosses the threshold between runs, and the within-item sd of the "
            "normalised score."
        ),
    )
    if reason := wh.missing("judge_stability", source="judge_ratings"):
        p.absent = reason + "; it needs reruns (run_id) of the same items"
        return p
    df = wh.df(
        "select judge, dimension, n_items, flip_rate, flip_rate_ci_low, flip_rate_ci_high, "
        "pass_cross_rate, pass_cross_rate_ci_low, pass_cross_rate_ci_high, within_item_sd, "
        "within_item_sd_ci_low, within_item_sd_ci_high, notes from judge_stability "
        "order by flip_rate desc, judge, dimension"
    )
    p.caption += f" Intervals at {_level(wh, 'judge_stability')}."
    df["notes"] = df["notes"].fillna("")
    attach_table(p, df)
    return p
