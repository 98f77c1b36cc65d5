"""Win rates per judge x model from pairwise verdicts (model_win_rates): the judge's
win rate of each model against every opponent it met (ties one half), the human win
rate on the judgments with a human verdict, and the gap judge - human on those same
judgments (the MT-Bench case: a judge agreeing with humans most of the time can still
report its own model's win rate well above theirs).

Each rate is a ratio of sums over prompts, R = sum_p w_p / sum_p n_p; its variance is
prompt-clustered (a prompt's judgments, both orders, reruns and opponents, share its
content): var = G / (G - 1) sum_p (w_p - R n_p)^2 / (sum_p n_p)^2 over the G prompts,
statsmodels' cluster-robust variance of an intercept-only OLS on the judgments
(tests/test_win_rates.py). The gap is the same for the per-judgment difference
judge win - human win. Wald intervals at ci_level; the gap's p-value is the z-test's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

GROUP = ["judge", "model"]


def _clustered(frame: pd.DataFrame, wins: str, n: str) -> pd.DataFrame:
    """Per GROUP: the ratio sum wins / sum n and its prompt-clustered standard error."""
    f = frame[frame[n] > 0]
    g = f.groupby(GROUP)
    rate = g[wins].transform("sum") / g[n].transform("sum")
    resid2 = ((f[wins] - rate * f[n]) ** 2).groupby([f[c] for c in GROUP]).sum()
    out = pd.DataFrame({"wins": g[wins].sum(), "n": g[n].sum(), "g": g.size(), "ss": resid2})
    out["rate"] = out["wins"] / out["n"]
    with np.errstate(divide="ignore", invalid="ignore"):
        var = out["g"] / (out["g"] - 1) * out["ss"] / out["n"] ** 2
    out["se"] = np.sqrt(var).where(out["g"] >= 2)
    return out


def win_rates(sums: pd.DataFrame, ci_level: float = 0.90) -> pd.DataFrame:
    """model_win_rates from int_win_rate_prompt_sums (one row per judge x model x
    prompt: n_judgments, judge_wins, n_with_human, judge_wins_with_human, human_wins)."""
    z = float(stats.norm.ppf(0.5 + ci_level / 2))
    s = sums.copy()
    s["gap_wins"] = s["judge_wins_with_human"] - s["human_wins"]
    judge = _clustered(s, "judge_wins", "n_judgments")
    out = pd.DataFrame(index=judge.index)
    out["n_judgments"] = judge["n"]
    out["n_prompts"] = judge["g"]

    def put(prefix: str, part: pd.DataFrame) -> None:
        part = part.reindex(out.index)
        out[prefix] = part["rate"]
        out[f"{prefix}_std_error"] = part["se"]
        out[f"{prefix}_ci_low"] = part["rate"] - z * part["se"]
        out[f"{prefix}_ci_high"] = part["rate"] + z * part["se"]

    put("judge_win_rate", judge)
    human = _clustered(s, "human_wins", "n_with_human")
    put("human_win_rate", human)
    put("judge_win_rate_with_human", _clustered(s, "judge_wins_with_human", "n_with_human"))
    put("judge_minus_human", _clustered(s, "gap_wins", "n_with_human"))
    out["n_with_human"] = human["n"].reindex(out.index).fillna(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        zstat = out["judge_minus_human"] / out["judge_minus_human_std_error"]
    out["judge_minus_human_p_value"] = pd.Series(2 * stats.norm.sf(np.abs(zstat)),
                                                 index=out.index).where(zstat.notna())  # fmt: skip
    out["ci_level"] = ci_level
    notes = pd.Series(None, index=out.index, dtype=object)
    notes[out["n_with_human"] == 0] = "no human verdict: the human win rate and gap are null"
    notes[out["n_prompts"] < 2] = "fewer than 2 prompts: no interval"
    out["notes"] = notes
    return out.reset_index()
