"""Self versus peers under two grading frames (Magyar 2025), and CALM's
self-enhancement error rate (Ye et al. 2024).

Per judge j and frame f, an item is a (prompt, dimension) on which j scored
its own model's completion under f. S = that score; R = the mean score the
other judges gave the same completion (under the positive frame, so that R is
one fixed peer view for both frames); G = the mean score j gave the other
models' completions of the item under f. All on the normalised scale, the
inverted frame already mapped back. Paired t-tests of S - R and S - G with
95% intervals; a row ``inverted - positive`` tests, on the items a judge has
under both frames, whether the frame changes S - R and S - G (items scored
under one frame only are left out and counted in its ``notes``).

The items of one prompt (its dimensions) are not independent: the tests use
the prompt-clustered (CR1) standard error of the mean difference with G - 1
degrees of freedom (G prompts), as statsmodels' cluster covariance with t
inference does; with one item per prompt that is exactly the paired t-test.
The se_ columns are clustered the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import stats

COLUMNS = [
    "judge", "framing", "n", "mean_self", "se_self", "mean_received", "se_received",
    "mean_given", "se_given", "mean_self_minus_received", "t_self_received",
    "p_self_received", "ci_low_self_received", "ci_high_self_received",
    "mean_self_minus_given", "t_self_given", "p_self_given", "ci_low_self_given",
    "ci_high_self_given", "self_enhancement_error_rate", "notes",
]  # fmt: skip
FRAME_DIFFERENCE = "inverted - positive"
# bytes per item row at int_self_vs_peer_tests_results' peak (the fetched codes and
# S, R, G, the coded frame, a judge's groups and frame pivot: at 10M the process
# grew by 490 MB over 1.67M items): whole judges are read in parts of a quarter of
# the memory budget by it
ITEM_BYTES = 300


def _items(fct: pd.DataFrame) -> pd.DataFrame:
    """One row per judge x framing x (prompt, dimension) with S, R and G."""
    scored = fct[fct["judge_score_norm"].notna()]
    runs = ["judge", "framing", "prompt_id", "model", "dimension"]
    per = scored.groupby(runs, as_index=False)["judge_score_norm"].mean()
    own = per[per["judge"] == per["model"]].rename(columns={"judge_score_norm": "s"})
    positive = per[per["framing"] == "positive"]
    received = own[["judge", "framing", "prompt_id", "dimension"]].merge(
        positive.rename(columns={"judge": "peer", "model": "judge"}),
        on=["judge", "prompt_id", "dimension"],
        suffixes=("", "_peer"),
    )
    received = (
        received[received["peer"] != received["judge"]]
        .groupby(["judge", "framing", "prompt_id", "dimension"], as_index=False)["judge_score_norm"]
        .mean()
        .rename(columns={"judge_score_norm": "r"})
    )
    given = (
        per[per["judge"] != per["model"]]
        .groupby(["judge", "framing", "prompt_id", "dimension"], as_index=False)["judge_score_norm"]
        .mean()
        .rename(columns={"judge_score_norm": "g"})
    )
    key = ["judge", "framing", "prompt_id", "dimension"]
    return own[[*key, "s"]].merge(received, on=key).merge(given, on=key)


def _clustered_mean(x: np.ndarray, clusters: np.ndarray) -> tuple[float, float, int]:
    """Mean, its prompt-clustered (CR1) standard error, and the number of clusters."""
    n = len(x)
    codes, uniques = pd.factorize(clusters)
    g = len(uniques)
    if n < 2 or g < 2:
        return (float(np.mean(x)) if n else np.nan), np.nan, g
    mean = float(np.mean(x))
    scores = np.bincount(codes, weights=x - mean, minlength=g)
    return mean, float(np.sqrt(g / (g - 1) * (scores**2).sum()) / n), g


def _paired(
    a: np.ndarray,
    b: np.ndarray,
    clusters: np.ndarray,
    what: str = "a - b",
    notes: list[str] | None = None,
):
    """Mean of a - b, t, p and the 95% interval, prompt-clustered (t with G - 1 df);
    where a statistic is undefined it is null and ``notes`` gets the reason."""
    notes = [] if notes is None else notes
    mean, se, g = _clustered_mean(a - b, clusters)
    if not np.isfinite(se):
        reason = "no item" if not len(a) else f"{g} prompt" if g < 2 else f"{len(a)} item"
        notes.append(f"{what}: {reason}, no clustered standard error; t, p and interval null")
        return mean, np.nan, np.nan, np.nan, np.nan
    if se <= 1e-12 * max(1.0, abs(mean)):  # rounding leaves ~1e-17 on equal differences
        notes.append(f"{what}: the same on every item (standard error 0); t and p null")
        return mean, np.nan, np.nan, mean, mean
    t = mean / se
    crit = stats.t.ppf(0.975, g - 1)
    return mean, t, float(2 * stats.t.sf(abs(t), g - 1)), mean - crit * se, mean + crit * se


def self_enhancement_error_rate(s: np.ndarray, r: np.ndarray, notes: list[str]) -> float:
    """CALM's |self - other| / other on the means; null (with a note) when the
    peers' mean score is 0 or there is no item."""
    if not len(s):
        return np.nan
    if r.mean() == 0:
        notes.append("self_enhancement_error_rate null: the peers' mean score is 0")
        return np.nan
    return float(abs(s.mean() - r.mean()) / r.mean())


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else np.nan


def _note(notes: list[str]) -> str | None:
    return "; ".join(notes) if notes else None


def _se(x: np.ndarray, clusters: np.ndarray) -> float:
    return _clustered_mean(x, clusters)[1]


def self_vs_peer_tests(fct: pd.DataFrame | None = None, items: pd.DataFrame | None = None):
    """The tests from ratings (``fct``) or from the items table the warehouse builds
    (int_self_vs_peer_items: judge, framing, prompt_id, dimension, s, r, g)."""
    items = _items(fct) if items is None else items
    return self_vs_peer_from_parts([items])


def self_vs_peer_from_parts(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """self_vs_peer_tests of the items read in parts of whole judges in their sorted
    order (int_self_vs_peer_tests_results reads them so within the memory budget):
    the rows of the whole table, in its order (every judge x framing row, then
    the frame differences)."""
    framed: list[list] = []
    differences: list[list] = []
    for items in parts:
        framed += _framing_rows(items)
        differences += _difference_rows(items)
        del items  # not held while the next part is read (review18d)
    out = pd.DataFrame(framed + differences, columns=COLUMNS)
    out["notes"] = out["notes"].astype("string")
    return out


def _framing_rows(items: pd.DataFrame) -> list[list]:
    """One row per judge x framing of the items."""
    rows = []
    for (judge, framing), it in items.groupby(["judge", "framing"], observed=True):
        s, r, g = (it[c].to_numpy() for c in ("s", "r", "g"))
        c = np.asarray(it["prompt_id"])
        notes: list[str] = []
        rows.append(
            [judge, framing, len(it), s.mean(), _se(s, c), r.mean(), _se(r, c), g.mean(),
             _se(g, c), *_paired(s, r, c, "S - R", notes), *_paired(s, g, c, "S - G", notes),
             self_enhancement_error_rate(s, r, notes), _note(notes)]
        )  # fmt: skip
    return rows


def _difference_rows(items: pd.DataFrame) -> list[list]:
    """One ``inverted - positive`` row per judge with items under both frames."""
    rows = []
    for judge, it in items.groupby("judge", observed=True):
        if set(it["framing"]) < {"positive", "inverted"}:
            continue
        wide = it.pivot_table(index=["prompt_id", "dimension"], columns="framing",
                              values=["s", "r", "g"], observed=True)  # fmt: skip
        # an item scored under one frame only has no frame difference: left out, counted
        n_one_frame = int(wide.isna().any(axis=1).sum())
        wide = wide.dropna()
        notes = (
            [f"{n_one_frame} items (prompt x dimension) scored under one frame only: left out"]
            if n_one_frame
            else []
        )
        s_r = {f: (wide[("s", f)] - wide[("r", f)]).to_numpy() for f in ("positive", "inverted")}
        s_g = {f: (wide[("s", f)] - wide[("g", f)]).to_numpy() for f in ("positive", "inverted")}
        ds = wide[("s", "inverted")] - wide[("s", "positive")]
        dg = wide[("g", "inverted")] - wide[("g", "positive")]
        c = wide.index.get_level_values("prompt_id").to_numpy()
        # R is the positive-frame peer view in both frames: its change is 0 by
        # construction, so mean_received and se_received are null on this row
        rows.append(
            [judge, FRAME_DIFFERENCE, len(wide), _mean(ds.to_numpy()), _se(ds.to_numpy(), c),
             np.nan, np.nan, _mean(dg.to_numpy()), _se(dg.to_numpy(), c),
             *_paired(s_r["inverted"], s_r["positive"], c, "change of S - R", notes),
             *_paired(s_g["inverted"], s_g["positive"], c, "change of S - G", notes), np.nan,
             _note(notes)]
        )  # fmt: skip
    return rows
