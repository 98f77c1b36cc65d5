"""Pairwise-judgment biases: position, self-preference, equal opportunity, length.

Input: the accepted rows of ``int_pairwise_checked`` (one row per ordered
judgment: judge, prompt_id, model_first, model_second, run_id, verdict in
first / second / tie, optional p_first, human_verdict, lengths, perplexities,
is_self_first / is_self_second, pair_key). Output grain of ``pairwise_bias``:
judge x opponent, where opponent is the other model of a pair that contains
the judge's own model, and ``all`` pools every judgment of the judge (pairs
without its own model included).

Definitions (ties are a verdict, never dropped silently; n_ties counts them):

- position_consistency: among unordered pairs asked in both orders (two rows
  with the same pair_key), the share where the judge's two verdicts name the
  same completion; tie in both orders counts as consistent, a tie in one order
  only as inconsistent.
- first_slot_rate: share of decisive verdicts (ties excluded) for the first
  slot; 0.5 means no position preference. first_slot_rate_inconsistent: the
  same among the judgments of position-inconsistent pairs.
- self_preference_rate: among decisive judgments of pairs containing the
  judge's own model (both orders counted), the share naming the own
  completion. self_preference_prob: mean probability mass on the own
  completion (p_first when the own completion is first, else 1 - p_first)
  over those judgments that have p_first, ties included.
  self_preference_rate_ties_half: the same judgments as self_preference_rate
  with ties in: (own picks + ties / 2) / judgments of own pairs, a tie counting
  one half as in AlpacaEval's ``discrete_win_rate`` (ZeroOneScoringRule; its
  own-model baseline's side: 1 - discrete_win_rate); n_self_preference_ties
  counts those ties.
- eo_bias (Definition 3.1 of self_preference_equal_opportunity.txt): with
  the human's preferred completion as y1, P(judge picks y1 | own = y1) -
  P(judge picks y1 | own = y0) = recall when humans prefer the own completion
  minus recall when they prefer the other one. Units are the ordered
  judgments, so both orders of a pair are pooled with equal weight (the
  average of the two orders' rates when every pair is asked both ways); human
  ties and judge ties are left out (Y and Y' must be 0 or 1).
- length_slope: per judge, logistic regression of "first slot chosen" (ties
  excluded) on a position intercept and a slope on the tanh-normalised
  length difference (``pairwise_features.length_difference_feature``),
  autograder_bayesian_glms.txt eq. 5 without the hierarchical prior: the
  judges' intercepts and slopes are separate, which is what eq. 5's fixed
  effects give. Fitted with statsmodels' binomial GLM on rows compressed to
  distinct (x, successes, trials) when x has ties (exact, the likelihood is
  the same), with statsmodels' Logit on the rows otherwise.

Intervals (95%, the ci_method column says so on each row): rates get Wilson
intervals with a design-effect-adjusted sample size, clusters = prompts
(``intervals.clustered_rates``); both orders of a pair and several pairs of a
prompt are not independent, and this reduces to the plain Wilson interval
when they are. eo_bias gets Newcombe's hybrid score interval from the two
recalls' intervals, with their cluster-robust correlation (the recalls share
prompts; Newcombe's form for correlated estimates). length_slope gets a Wald
interval with the cluster-robust (prompt) sandwich standard error, with
statsmodels' small-sample correction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_bias.pairwise.columns import (
    ALL,
    CI_METHOD,
    EO_COUNTS,
    N_PERPLEXITY_BINS,
    PAIRWISE_BIAS_COLUMNS,
    PERPLEXITY_BIN_COLUMNS,
    PERPLEXITY_CI,
    no_length_slope_note,
    own_ties_rate_note,
)
from judge_bias.pairwise.features import length_difference_feature
from judge_bias.pairwise.reference.logit import logit_terms
from judge_bias.stats.intervals import cluster_correlation, clustered_rates
from judge_bias.stats.numeric import to_float

# memory of one accepted pairwise row pulled into pandas (13 columns as objects)
PAIRWISE_ROW_BYTES = 13 * 80


def _typed(frame: pd.DataFrame, schema: dict[str, str]) -> pd.DataFrame:
    """The columns of ``schema`` in order and type (an empty frame keeps them)."""
    frame = frame.reindex(columns=list(schema))
    return frame.astype(schema)


def _column(df: pd.DataFrame, name: str, fill: object = np.nan) -> pd.Series:
    return df[name] if name in df.columns else pd.Series(fill, index=df.index)


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(values, sort=True)
    return codes, np.asarray(uniques, dtype=object)


def prepare(rows: pd.DataFrame) -> pd.DataFrame:
    """Integer-coded, vectorised working columns of the accepted pairwise rows."""
    n = len(rows)
    judge, judges = _codes(rows["judge"])
    prompt, _ = _codes(rows["prompt_id"])
    models_all = pd.concat([rows["model_first"], rows["model_second"]], ignore_index=True)
    model_code, models = _codes(models_all)
    mf, ms = model_code[:n], model_code[n:]
    verdict = rows["verdict"].to_numpy(dtype=object)
    first, second = verdict == "first", verdict == "second"
    self_first = _column(rows, "is_self_first", False).fillna(False).to_numpy(dtype=bool)
    self_second = _column(rows, "is_self_second", False).fillna(False).to_numpy(dtype=bool)
    own = self_first | self_second
    human = _column(rows, "human_verdict", None).to_numpy(dtype=object)
    p_first = to_float(rows.get("p_first"), "p_first", n)
    pair, _ = _codes(rows["pair_key"])
    out = pd.DataFrame(
        {
            "judge": judge,
            "prompt": prompt,
            "pair": pair,
            # the other model of a pair holding the judge's own model, else -1
            "opponent": np.where(self_first, ms, np.where(self_second, mf, -1)),
            "first": first,
            "decisive": first | second,
            "own": own,
            "picked_own": (self_first & first) | (self_second & second),
            "p_own": np.where(self_first, p_first, 1.0 - p_first),
            "human_first": human == "first",
            "human_decisive": (human == "first") | (human == "second"),
            "human_own": ((human == "first") & self_first) | ((human == "second") & self_second),
            "chosen": np.where(first, mf, np.where(second, ms, -1)),
            "model_first": mf,
            "model_second": ms,
        }
    )
    out.attrs["judges"], out.attrs["models"] = judges, models
    return out


def _sums(units: pd.DataFrame, value: np.ndarray | str) -> pd.DataFrame:
    """Per judge x opponent x prompt sums y (of the unit values) and d (units)."""
    y = units[value].to_numpy(dtype=float) if isinstance(value, str) else value
    sums = pd.DataFrame(
        {
            "judge": units["judge"].to_numpy(),
            "opponent": units["opponent"].to_numpy(),
            "prompt": units["prompt"].to_numpy(),
            "y": y,
            "d": 1.0,
        }
    )
    sums = sums.groupby(["judge", "opponent", "prompt"], sort=False, observed=True).sum()
    return sums.reset_index()


def _by_opponent_and_pooled(fn, *sums: pd.DataFrame) -> pd.DataFrame | pd.Series:
    """``fn(*sums, keys, "prompt")`` per judge x opponent (own pairs) and per judge
    (``all``, opponent code -2)."""
    keys = ["judge", "opponent"]
    by_opponent = fn(*(x[x["opponent"] >= 0] for x in sums), keys, "prompt")
    pooled = fn(*(x.assign(opponent=-2) for x in sums), keys, "prompt")
    return pd.concat([by_opponent, pooled])


def rate_table(units: pd.DataFrame, value: np.ndarray | str, name: str) -> pd.DataFrame:
    """``clustered_rates`` per judge x opponent (own pairs) and per judge (``all``,
    opponent code -2), columns named after the rate."""
    table = _by_opponent_and_pooled(clustered_rates, _sums(units, value))
    return table.rename(
        columns={
            "rate": name,
            "ci_low": f"{name}_ci_low",
            "ci_high": f"{name}_ci_high",
            "n": f"_n_{name}",
        }
    ).drop(columns="n_eff")


def count_table(units: pd.DataFrame, name: str) -> pd.Series:
    """Number of units per judge x opponent (own pairs) and per judge (code -2)."""
    by_opponent = units[units["opponent"] >= 0].groupby(["judge", "opponent"]).size()
    pooled = units.groupby("judge").size()
    pooled.index = pd.MultiIndex.from_arrays(
        [pooled.index, np.full(len(pooled), -2)], names=["judge", "opponent"]
    )
    return pd.concat([by_opponent, pooled]).rename(name)


def _pairs(w: pd.DataFrame) -> pd.DataFrame:
    """One row per unordered pair: judge, opponent, prompt, size, consistent."""
    g = w.groupby("pair", sort=False)
    pairs = pd.DataFrame(
        {
            "judge": g["judge"].first(),
            "opponent": g["opponent"].first(),
            "prompt": g["prompt"].first(),
            "size": g.size(),
            "lo": g["chosen"].min(),
            "hi": g["chosen"].max(),
        }
    )
    pairs["consistent"] = pairs["lo"] == pairs["hi"]
    return pairs


def length_feature(rows: pd.DataFrame, w: pd.DataFrame) -> np.ndarray:
    """The tanh-normalised length difference of each row (NaN when unknown)."""
    lf = to_float(rows.get("length_first"), "length_first", len(rows))
    ls = to_float(rows.get("length_second"), "length_second", len(rows))
    return np.asarray(length_difference_feature(lf, ls), dtype=float)


def newcombe_correlated(table: pd.DataFrame, rho: np.ndarray | float) -> tuple:
    """Newcombe's hybrid score interval of eo_recall_own - eo_recall_other from the
    two recalls' Wilson intervals and their correlation rho (Newcombe 1998, method
    10, with the correlated-estimates term), bounded to [-1, 1]."""
    own = [table[f"eo_recall_own{end}"].to_numpy(float) for end in ("", "_ci_low", "_ci_high")]
    oth = [table[f"eo_recall_other{end}"].to_numpy(float) for end in ("", "_ci_low", "_ci_high")]
    below_own, above_own = own[0] - own[1], own[2] - own[0]
    below_oth, above_oth = oth[0] - oth[1], oth[2] - oth[0]
    down = below_own**2 + above_oth**2 - 2 * rho * below_own * above_oth
    up = above_own**2 + below_oth**2 - 2 * rho * above_own * below_oth
    diff = own[0] - oth[0]
    return (
        np.clip(diff - np.sqrt(np.maximum(down, 0.0)), -1.0, None),
        np.clip(diff + np.sqrt(np.maximum(up, 0.0)), None, 1.0),
    )


def slope_fits(w: pd.DataFrame, x: np.ndarray) -> pd.DataFrame:
    """Per judge code: the length slope (statsmodels Logit of "first chosen" on a
    constant and x over its decisive judgments with a known x, prompt-clustered Wald
    95% interval), n_length_judgments, and ``note`` when there is no estimate."""
    known = w["decisive"].to_numpy() & ~np.isnan(x)
    data = pd.DataFrame(
        {
            "judge": w["judge"].to_numpy()[known],
            "y": w["first"].to_numpy()[known].astype(float),
            "x": x[known],
            "prompt": w["prompt"].to_numpy()[known],
        }
    )
    records = {}
    for judge, part in data.groupby("judge", sort=True):
        record: dict = {"n_length_judgments": len(part)}
        if part["y"].nunique() == 1 or part["x"].nunique() == 1:
            record["note"] = "length slope not estimable (one outcome only or no length variation)"
        else:
            design = np.column_stack([np.ones(len(part)), part["x"].to_numpy()])
            terms, why = logit_terms(
                design, part["y"].to_numpy(), part["prompt"].to_numpy(),
                ["length_intercept", "length_slope"], ["position", "length_slope"],
            )  # fmt: skip
            record |= {k: v for k, v in terms.items() if k.startswith("length_slope")}
            if why is not None:
                record["note"] = "length slope " + why
        records[judge] = record
    columns = ["n_length_judgments", "length_slope", "length_slope_ci_low",
               "length_slope_ci_high", "note"]  # fmt: skip
    return pd.DataFrame.from_dict(records, orient="index").reindex(columns=columns)


def row_notes(
    table: pd.DataFrame,
    slopes: pd.DataFrame,
    ties_with_lengths: set[int] | frozenset[int] = frozenset(),
) -> list[str | None]:
    """The notes of pairwise_bias rows (judge and opponent codes, -2 pooled): what a
    rate had no units for, and on the pooled row why there is no length slope
    (``ties_with_lengths``: the judge codes whose ties have lengths)."""
    out = []
    for _, r in table.iterrows():
        pooled = r["opponent"] == -2
        slope_note = slopes["note"].get(r["judge"]) if pooled else None
        checks = [
            (r["n_swapped_pairs"] == 0, "no pair asked in both orders"),
            (r["n_self_judgments"] == 0, "no pair with the judge's own model"),
            (
                r["n_self_judgments"] > 0 and pd.isna(r["self_preference_rate"]),
                own_ties_rate_note(
                    0 if pd.isna(r["n_self_judgments"]) else int(r["n_self_judgments"])
                ),
            ),
            (r["n_self_judgments"] > 0 and pd.isna(r["self_preference_prob"]), "no p_first"),
            (
                r["n_self_judgments"] > 0 and pd.isna(r["eo_bias"]),
                "eo_bias needs human verdicts preferring each side",
            ),
            (isinstance(slope_note, str), slope_note),
            (
                pooled and not isinstance(slope_note, str) and pd.isna(r["length_slope"]),
                no_length_slope_note(
                    int(np.nan_to_num(r["n_judgments"])),
                    int(np.nan_to_num(r["n_ties"])),
                    r["judge"] in ties_with_lengths,
                ),
            ),
        ]
        out.append("; ".join(str(text) for hit, text in checks if hit) or None)
    return out


def pairwise_bias(rows: pd.DataFrame) -> pd.DataFrame:
    """The pairwise_bias table (grain judge x opponent, ``all`` pooled) from the
    accepted int_pairwise_checked rows; see the module docstring."""
    if rows.empty:
        return _typed(pd.DataFrame(), PAIRWISE_BIAS_COLUMNS)
    w = prepare(rows)
    judges, models = w.attrs["judges"], w.attrs["models"]
    pairs = _pairs(w)
    swapped = pairs[pairs["size"] >= 2]
    w["consistent_pair"] = pairs["consistent"].reindex(w["pair"]).to_numpy()
    w["in_swapped"] = (pairs["size"] >= 2).reindex(w["pair"]).to_numpy()
    decisive = w[w["decisive"]]
    own_decisive = decisive[decisive["own"]]
    inconsistent = decisive[decisive["in_swapped"] & ~decisive["consistent_pair"]]
    with_p = w[w["own"] & np.isfinite(w["p_own"])]
    own = w[w["own"]]
    # a win 1, a tie 1/2, a loss 0 (AlpacaEval's win rate, seen from the own side)
    own_or_half_tie = np.where(own["picked_own"], 1.0, np.where(own["decisive"], 0.0, 0.5))
    eo = own_decisive[own_decisive["human_decisive"]]

    parts = [
        count_table(w, "n_judgments"),
        count_table(pairs, "n_pairs"),
        count_table(w[~w["decisive"]], "n_ties"),
        count_table(swapped, "n_swapped_pairs"),
        count_table(swapped[~swapped["consistent"]], "n_inconsistent_pairs"),
        count_table(w[w["own"]], "n_self_judgments"),
        count_table(w[w["own"] & ~w["decisive"]], "n_self_preference_ties"),
        rate_table(swapped, "consistent", "position_consistency"),
        rate_table(decisive, "first", "first_slot_rate"),
        rate_table(inconsistent, "first", "first_slot_rate_inconsistent"),
        rate_table(own_decisive, "picked_own", "self_preference_rate"),
        rate_table(with_p, "p_own", "self_preference_prob"),
        rate_table(own, own_or_half_tie, "self_preference_rate_ties_half"),
        rate_table(eo[eo["human_own"]], "picked_own", "eo_recall_own"),
        rate_table(
            eo[~eo["human_own"]], ~eo["picked_own"][~eo["human_own"]].to_numpy(), "eo_recall_other"
        ),
    ]
    for name, sel in zip(
        EO_COUNTS,
        (
            eo["human_own"] & eo["picked_own"],
            eo["human_own"] & ~eo["picked_own"],
            ~eo["human_own"] & eo["picked_own"],
            ~eo["human_own"] & ~eo["picked_own"],
        ),
        strict=True,
    ):
        parts.append(count_table(eo[sel], name))
    table = pd.concat(parts, axis=1)
    table = table[[c for c in table.columns if not c.startswith("_n_")]]
    for name in (
        "n_judgments",
        "n_pairs",
        "n_ties",
        "n_swapped_pairs",
        "n_inconsistent_pairs",
        "n_self_judgments",
        "n_self_preference_ties",
    ):
        table[name] = table[name].fillna(0)
    for name in EO_COUNTS:
        table[name] = table[name].fillna(0)
    table["eo_bias"] = table["eo_recall_own"] - table["eo_recall_other"]
    # the two recalls share prompts: their correlation enters Newcombe's interval
    phi = _by_opponent_and_pooled(
        cluster_correlation,
        _sums(eo[eo["human_own"]], "picked_own"),
        _sums(eo[~eo["human_own"]], ~eo["picked_own"][~eo["human_own"]].to_numpy()),
    )
    rho = phi.reindex(table.index).fillna(0.0).to_numpy() if len(phi) else 0.0
    table["eo_bias_ci_low"], table["eo_bias_ci_high"] = newcombe_correlated(table, rho)

    x = length_feature(rows, w)
    slopes = slope_fits(w, x)
    tied = ~w["decisive"].to_numpy() & ~np.isnan(x)
    ties_with_lengths = set(np.unique(w["judge"].to_numpy()[tied]).tolist())
    table = table.reset_index()
    pooled = table["opponent"] == -2
    for col in (
        "n_length_judgments",
        "length_slope",
        "length_slope_ci_low",
        "length_slope_ci_high",
    ):
        table[col] = np.where(pooled, table["judge"].map(slopes[col]), np.nan)
    table["notes"] = row_notes(table, slopes, ties_with_lengths)
    table["ci_method"] = CI_METHOD
    table["judge"] = judges[table["judge"].to_numpy()]
    table["opponent"] = np.where(pooled, ALL, models[np.maximum(table["opponent"].to_numpy(), 0)])
    table = table.sort_values(["judge", "opponent"], key=lambda s: s.str.lower())
    return _typed(table.reset_index(drop=True), PAIRWISE_BIAS_COLUMNS)


def perplexity_bins(rows: pd.DataFrame, n_bins: int = N_PERPLEXITY_BINS) -> pd.DataFrame:
    """First-slot win rates of the judge and of the humans per bin of the
    log-perplexity difference log(perplexity_first) - log(perplexity_second)
    (perplexities under the judge; self_preference_equal_opportunity.txt,
    Section 4). Bins are the judge's quantile bins (at most ``n_bins``, equal
    counts, ties of the quantiles merged); ties are left out of both rates."""
    ppl_first = to_float(rows.get("perplexity_first"), "perplexity_first", len(rows))
    ppl_second = to_float(rows.get("perplexity_second"), "perplexity_second", len(rows))
    keep = (ppl_first > 0) & (ppl_second > 0)
    if not keep.any():
        return _typed(pd.DataFrame(), PERPLEXITY_BIN_COLUMNS)
    rows = rows[keep]
    w = prepare(rows)
    w["diff"] = np.log(ppl_first[keep]) - np.log(ppl_second[keep])
    w["bin"] = -1
    edges = {}
    for judge, idx in w.groupby("judge").indices.items():
        d = w["diff"].to_numpy()[idx]
        cut = np.unique(np.quantile(d, np.linspace(0, 1, n_bins + 1)))
        if len(cut) == 1:
            cut = np.array([cut[0], cut[0]])
        b = np.clip(np.searchsorted(cut, d, side="right") - 1, 0, len(cut) - 2)
        w.loc[w.index[idx], "bin"] = b
        edges[judge] = cut
    w["opponent"] = w["bin"]  # reuse the judge x group machinery, bins as groups
    judge_rate = rate_table(w[w["decisive"]], "first", "judge_first_rate")
    human = w[w["human_decisive"]]
    human_rate = rate_table(human, "human_first", "human_first_rate")
    table = pd.concat(
        [
            count_table(w[w["decisive"]], "n_judgments"),
            count_table(human, "n_human"),
            judge_rate,
            human_rate,
        ],
        axis=1,
    ).reset_index()
    table = table[table["opponent"] >= 0].fillna({"n_judgments": 0, "n_human": 0})
    # bin b of judge j spans its quantile edges b and b + 1; bins are numbered from 1
    bounds = [(edges[j][b], edges[j][b + 1]) for j, b in table[["judge", "opponent"]].to_numpy()]
    table["log_ppl_diff_low"] = [low for low, _ in bounds]
    table["log_ppl_diff_high"] = [high for _, high in bounds]
    table["bin"] = table["opponent"].to_numpy() + 1
    table["judge"] = w.attrs["judges"][table["judge"].to_numpy()]
    table["ci_method"] = PERPLEXITY_CI
    table = table.sort_values(["judge", "bin"])
    return _typed(table.reset_index(drop=True), PERPLEXITY_BIN_COLUMNS)
