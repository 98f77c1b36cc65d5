"""Report sections on agreement: annotators, judge vs human, self vs peer, counterfactual."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    pass
from judge_bias.agreement import SELF_VS_PEER_NEEDS
from judge_bias.report.base import (
    UNIT,
    Panel,
    Warehouse,
    attach_table,
    dodged_intervals,
    judge_families,
    new_figure,
    no_value_reason,
    panel,
    tab10_colours,
    zero_line,
)


@panel(60)
def panel_annotators(wh: Warehouse) -> Panel:
    p = Panel(
        "agreement_annotators",
        "Agreement between human annotators",
        caption=(
            "Krippendorff's alpha per dimension (1 = perfect agreement, 0 = chance level; "
            "dotted lines at 0.667 and 0.8, the usual thresholds for tentative and reliable "
            "data) with three distance metrics, and the share of items on which every "
            "annotator gave the same label."
        ),
    )
    if reason := wh.missing("agreement_annotators"):
        p.absent = reason
        return p
    df = wh.df("select * from agreement_annotators order by dimension = 'all', dimension")
    metrics = ["alpha_nominal", "alpha_ordinal", "alpha_interval", "observed_agreement"]
    metrics = [m for m in metrics if m in df.columns]
    usable = df.dropna(subset=metrics, how="all")
    if usable.empty:
        notes = "; ".join(sorted(set(df["notes"].dropna().astype(str)))) if "notes" in df else ""
        p.absent = "no agreement could be computed" + (f": {notes}" if notes else "")
        return p
    fig = new_figure(2.5 + 1.6 * len(usable), 4.2)
    ax = fig.subplots()
    width = 0.8 / len(metrics)
    palette = tab10_colours()
    for k, m in enumerate(metrics):
        xs = [i - 0.4 + width * (k + 0.5) for i in range(len(usable))]
        vals = usable[m].astype(float).fillna(0).to_numpy()
        ax.bar(xs, vals, width, label=m.replace("_", " "), color=palette[k])
    for t, word in ((0.667, "tentative"), (0.8, "reliable")):
        ax.axhline(t, color="0.4", linestyle=":", linewidth=1)
        ax.text(len(usable) - 0.45, t, f"{word} ({t})", ha="right", va="bottom", fontsize=8)
    ax.axhline(0, color="black", linewidth=0.8)
    ticks = [f"{d}\n(n = {n} items)" for d, n in zip(usable.dimension, usable.n_items, strict=True)]
    ax.set_xticks(range(len(usable)), ticks)
    ax.set_ylabel("alpha / share of items")
    ax.set_xlabel("dimension ('all' = pooled over dimensions, normalised scores)")
    ax.set_ylim(min(0, float(usable[metrics].min().min()) - 0.05), 1.05)
    ax.set_title("Inter-annotator agreement")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    p.figure = fig
    cols = ["dimension", "n_items", "n_annotators", *metrics]
    cols += [c for c in ("n_gold_items", "gold_accuracy", "gold_spearman", "notes") if c in df]
    attach_table(p, df[cols])
    return p


@panel(70)
def panel_judge_human(wh: Warehouse) -> Panel:
    p = Panel(
        "agreement_judge_human",
        "How well each judge's scores track the human reference",
        caption=(
            "Correlation between a judge's normalised scores and the human reference over all "
            "its ratings (all dimensions pooled), three ways, with 95% intervals; 1 = same "
            "ordering as humans, 0 = unrelated."
        ),
    )
    if reason := wh.missing("agreement_judge_human"):
        p.absent = reason
        return p
    df = wh.df("select * from agreement_judge_human where dimension = 'all'")
    if df.empty:
        p.absent = "agreement_judge_human has no pooled (dimension = 'all') rows"
        return p
    if reason := no_value_reason(
        "agreement_judge_human", df, ("spearman", "pearson", "kendall_tau_b")
    ):
        p.absent = reason
        return p
    judges = [j for j in judge_families(wh)["judge"] if j in set(df.judge)]
    judges += sorted(set(df.judge) - set(judges))
    series = [
        (label, df, m, f"{m}_ci_low", f"{m}_ci_high")
        for m, label in (
            ("spearman", "Spearman rho"),
            ("pearson", "Pearson r"),
            ("kendall_tau_b", "Kendall tau-b"),
        )
        if m in df.columns
    ]
    fig = new_figure(9, 1.5 + 0.45 * len(judges))
    ax = fig.subplots()
    dodged_intervals(ax, judges, series, "judge")
    zero_line(ax)
    ax.set_xlabel("correlation with the human reference (95% interval)")
    ax.set_ylabel("judge")
    ax.set_title("Judge-human correlation, all dimensions")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    p.figure = fig
    return p


@panel(80)
def panel_self_vs_peer(wh: Warehouse) -> Panel:
    p = Panel(
        "self_vs_peer",
        "Self versus peers (paired t-tests)",
        caption=(
            "Left: S - R, the score a judge gives its own completion minus the mean score the "
            "other judges give that completion; right: S - G, minus the mean score it gives the "
            "other models on the same item; 95% intervals, one colour per grading frame "
            "('inverted - positive' is the change between frames). Right of zero = the judge "
            "rates itself higher than its peers do / than it rates its peers."
        ),
    )
    if reason := wh.missing("self_vs_peer_tests"):
        # a new user with one judge, or judges that never rate their own model, saw
        # only "has no rows" (newuser20)
        p.absent = reason + (
            f"; it needs {SELF_VS_PEER_NEEDS}" if reason.endswith("has no rows") else ""
        )
        return p
    df = wh.df("select * from self_vs_peer_tests")
    judges = [j for j in judge_families(wh)["judge"] if j in set(df.judge)]
    judges += sorted(set(df.judge) - set(judges))
    framings = sorted(df.framing.unique(), key=lambda f: (f != "positive", f))
    fig = new_figure(12, 1.6 + 0.35 * len(judges) * max(1, len(framings) / 1.5))
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    for ax, diff, tag in ((ax1, "self_received", "S - R"), (ax2, "self_given", "S - G")):
        series = [
            (
                f,
                df[df.framing == f],
                f"mean_self_minus_{diff.split('_')[1]}",
                f"ci_low_{diff}",
                f"ci_high_{diff}",
            )
            for f in framings
        ]
        dodged_intervals(ax, judges, series, "judge")
        zero_line(ax)
        ax.set_xlabel(f"mean {tag}, {UNIT} (95% interval)")
        ax.set_title(
            "S - R: own score minus peers' score of it"
            if tag == "S - R"
            else "S - G: own score minus score it gives peers"
        )
    ax1.set_ylabel("judge")
    ax2.legend(title="grading frame", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    p.figure = fig
    return p


@panel(90)
def panel_counterfactual(wh: Warehouse) -> Panel:
    p = Panel(
        "agreement_counterfactual",
        "Judge-human agreement before and after removing the judge's offset and scale",
        caption=(
            "Krippendorff's interval alpha between a judge and the human reference as "
            "observed (grey) and after shifting and scaling the judge's scores to the human "
            "mean and spread per dimension (blue), with 95% bootstrap intervals; the gap is "
            "the disagreement a simple calibration would remove, what remains is real "
            "disagreement about which completions are better."
        ),
    )
    if reason := wh.missing("agreement_counterfactual"):
        p.absent = reason
        return p
    df = wh.df("select * from agreement_counterfactual")
    if reason := no_value_reason(
        "agreement_counterfactual", df, ("alpha_observed", "alpha_calibrated")
    ):
        p.absent = reason
        return p
    judges = [j for j in judge_families(wh)["judge"] if j in set(df.judge)]
    judges += sorted(set(df.judge) - set(judges))
    fig = new_figure(9, 1.5 + 0.45 * len(judges))
    ax = fig.subplots()
    ordered = judges[::-1]
    f = df.set_index("judge")
    for i, j in enumerate(ordered):
        r = f.loc[j]
        if not (pd.isna(r.alpha_observed) or pd.isna(r.alpha_calibrated)):
            ax.annotate(
                "",
                xy=(r.alpha_calibrated, i),
                xytext=(r.alpha_observed, i),
                arrowprops={"arrowstyle": "->", "color": "0.6", "lw": 1},
            )
    dodged_intervals(
        ax,
        judges,
        [
            (
                "observed",
                df,
                "alpha_observed",
                "alpha_observed_ci_low",
                "alpha_observed_ci_high",
            ),
            (
                "after removing offset and scale",
                df,
                "alpha_calibrated",
                "alpha_calibrated_ci_low",
                "alpha_calibrated_ci_high",
            ),
        ],
        "judge",
        palette=["0.55", "tab:blue"],
    )
    zero_line(ax)
    ax.set_xlabel("Krippendorff's interval alpha, judge vs human (95% bootstrap interval)")
    ax.set_ylabel("judge")
    ax.set_title("Counterfactual agreement")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    p.figure = fig
    return p
