"""The debiased leaderboard section: each model ranked by the human reference, the raw judge
mean and the debiased score, with the rank agreement between them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    pass
from judge_bias.report.base import (
    Panel,
    Warehouse,
    esc,
    fmt_value,
    judge_families,
    panel,
)


@panel(50)
def panel_leaderboard(wh: Warehouse) -> Panel:
    p = Panel(
        "leaderboard",
        "Debiased leaderboard: each judge's ranking before and after removing its bias",
        caption=(
            "A cell reads 'rank before → rank after debiasing (human rank)' for the model "
            "(row) as ranked by the judge (column), rank 1 = best; green: debiasing moved the "
            "model closer to its human rank, red: further away; bold, boxed: the judge's own "
            "model. Debiasing subtracts the main fit's self- and family-bias estimates; below "
            "the table, each judge's rank correlation with the human ranking before and after."
        ),
    )
    if reason := wh.missing("debiased_leaderboard"):
        p.absent = reason
        return p
    lb = wh.df("select * from debiased_leaderboard")
    judges = [j for j in judge_families(wh)["judge"] if j in set(lb["judge"])]
    judges += sorted(set(lb["judge"]) - set(judges))
    pooled = (
        lb.assign(w=lb["mean_human_score"] * lb["n"])
        .groupby("model")[["w", "n"]]
        .sum()
        .assign(h=lambda d: d["w"] / d["n"])
        .sort_values("h", ascending=False)
    )
    models = list(pooled.index)
    cells = lb.set_index(["judge", "model"])
    head = "<th>model</th>" + "".join(f"<th>{esc(j)}</th>" for j in judges)
    head += "<th>human mean (all judges' ratings)</th>"
    body = []
    summary = []
    for m in models:
        tds = [f"<th>{esc(m)}</th>"]
        for j in judges:
            if (j, m) not in cells.index:
                tds.append("<td></td>")
                continue
            r = cells.loc[(j, m)]
            cls = []
            if not pd.isna(r.human_rank):
                before = abs(r["rank"] - r.human_rank)
                after = abs(r.debiased_rank - r.human_rank)
                cls.append("better" if after < before else "worse" if after > before else "")
            if j == m:
                cls.append("own")
            human = "" if pd.isna(r.human_rank) else f" ({int(r.human_rank)})"
            tip = (
                f"mean {r.mean_score:.3f} → {r.mean_debiased_score:.3f}; "
                f"human mean {fmt_value(r.mean_human_score)}; n = {int(r.n)}"
            )
            tds.append(
                f'<td class="{" ".join(c for c in cls if c)}" title="{esc(tip)}">'
                f"{int(r['rank'])} → {int(r.debiased_rank)}{human}</td>"
            )
        tds.append(f"<td>{pooled.loc[m, 'h']:.3f}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    for j in judges:
        rho = leaderboard_rank_agreement(lb[lb.judge == j])
        if rho is None:
            continue
        summary.append(
            f'<li class="rank-agreement"><b>{esc(j)}</b>: Spearman correlation of its model '
            f"ranking with the human ranking {rho[0]:+.2f} before debiasing, {rho[1]:+.2f} "
            "after</li>"
        )
    p.html = (
        f'<table class="leaderboard"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(body)
        + "</tbody></table><ul>"
        + "".join(summary)
        + "</ul>"
    )
    return p


def leaderboard_rank_agreement(rows: pd.DataFrame) -> tuple[float, float] | None:
    """Spearman correlation of one judge's model means with the human means, before and
    after debiasing (None with fewer than three models or a constant column)."""
    from scipy.stats import spearmanr

    rows = rows.dropna(subset=["mean_score", "mean_debiased_score", "mean_human_score"])
    if len(rows) < 3 or rows["mean_human_score"].nunique() < 2:
        return None
    before = spearmanr(rows["mean_score"], rows["mean_human_score"]).statistic
    after = spearmanr(rows["mean_debiased_score"], rows["mean_human_score"]).statistic
    if math.isnan(before) or math.isnan(after):
        return None
    return float(before), float(after)
