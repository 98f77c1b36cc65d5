"""The pairwise marts from SQL aggregates (issue 17): the same tables as
``reference.human.pairwise_bias_with_human``, ``reference.human.joint_bias`` and
``reference.rates.perplexity_bins`` compute from the rows, from

- ``int_pairwise_prompt_sums``: per judge x opponent x prompt, each rate's units
  (``<rate>_d``) and their sum (``<rate>_y``), and the counts; a rate and its
  prompt-clustered interval need nothing else (``intervals.clustered_rates``);
- ``int_pairwise_kappa_counts``: per judge x opponent, (verdict, human verdict)
  counts, Cohen's kappa's table;
- ``int_pairwise_logit_cells``: per judge x prompt x distinct regressors (x, own
  and human codes), trials and first-slot choices. A logistic likelihood and its
  prompt-clustered scores are sums over rows with the same regressors and prompt,
  so the fits run on the cells expanded to numeric 0/1 outcomes (a float and an
  integer per judgment, not the text of the rows);
- ``int_pairwise_perplexity_cells``: per judge x prompt x distinct log-perplexity
  difference, the counts the quantile bins and their rates need.

Definitions, intervals and notes are those of ``reference.rates`` and
``reference.human`` (their module docstrings), which compute the same tables from
the rows with code of their own; tests compare both routes on the same rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_bias.pairwise.columns import (
    ALL,
    EO_COUNTS,
    GIVEN_HUMAN_NOTE,
    HUMAN_COLUMNS,
    JOINT_CI,
    JOINT_COLUMNS,
    N_PERPLEXITY_BINS,
    PERPLEXITY_BIN_COLUMNS,
    PERPLEXITY_CI,
    WITH_HUMAN_CI,
    WITH_HUMAN_COLUMNS,
    all_ties_note,
    no_human_verdict_note,
    no_length_term_note,
    no_own_pair_note,
)
from judge_bias.pairwise.fits import (
    cohens_kappa_table,
    fit_terms,
    given_human_columns,
    given_human_fit,
    length_slopes,
    mart_notes,
    with_given_human_note,
)
from judge_bias.stats.intervals import cluster_correlation, clustered_rates, newcombe_difference

KEYS = ["judge", "opponent"]
# a row of int_pairwise_logit_cells in pandas (8 columns) and its expansion
LOGIT_CELL_BYTES = 8 * 80
PERPLEXITY_CELL_BYTES = 8 * 80
POOLED = -2  # opponent code of the pooled (`all`) rows
NO_OPPONENT = -1  # pairs without the judge's own model


def _coded(sums: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Judge and opponent as integer codes (opponent -1 when null), prompts as codes
    too (clusters only: grouping integers is several times faster than text)."""
    judge, judges = pd.factorize(sums["judge"], sort=True)
    opponent, opponents = pd.factorize(sums["opponent"], sort=True, use_na_sentinel=True)
    out = sums.assign(
        judge=judge,
        opponent=np.where(opponent < 0, NO_OPPONENT, opponent),
        prompt_id=pd.factorize(sums["prompt_id"])[0],
    )
    return out, np.asarray(judges, dtype=object), np.asarray(opponents, dtype=object)


def _both(frame: pd.DataFrame) -> list[pd.DataFrame]:
    """The own-pair groups (opponent >= 0) and the pooled groups (code -2)."""
    return [frame[frame["opponent"] >= 0], frame.assign(opponent=POOLED)]


def _cluster_sums(sums: pd.DataFrame, y: str | pd.Series, d: str) -> pd.DataFrame:
    """Per judge x opponent x prompt, the rate's sum ``y`` (a column or its values)
    and units ``d``, rows without units left out."""
    out = pd.DataFrame(
        {
            "judge": sums["judge"].to_numpy(),
            "opponent": sums["opponent"].to_numpy(),
            "prompt": sums["prompt_id"].to_numpy(),
            "y": (sums[y] if isinstance(y, str) else y).to_numpy(dtype=float),
            "d": sums[d].to_numpy(dtype=float),
        }
    )
    return out[out["d"] > 0]


def _rate(sums: pd.DataFrame, y: str | pd.Series, d: str, name: str) -> pd.DataFrame:
    """clustered_rates per judge x opponent and pooled, named like rate_table's."""
    units = _cluster_sums(sums, y, d)
    table = pd.concat([clustered_rates(part, KEYS, "prompt") for part in _both(units)])
    return table.rename(
        columns={"rate": name, "ci_low": f"{name}_ci_low", "ci_high": f"{name}_ci_high"}
    ).drop(columns=["n", "n_eff"])


def _count(sums: pd.DataFrame, values: pd.Series | str, name: str) -> pd.Series:
    """The sum of ``values`` per judge x opponent and pooled, groups with none left out."""
    v = sums[values] if isinstance(values, str) else values
    frame = sums[KEYS].assign(v=v.to_numpy(dtype=float))
    frame = frame[frame["v"] > 0]
    parts = [part.groupby(KEYS)["v"].sum() for part in _both(frame)]
    return pd.concat(parts).rename(name)


def _base_table(sums: pd.DataFrame) -> pd.DataFrame:
    """pairwise.pairwise_bias's columns (valid verdicts), indexed by judge x opponent."""
    parts = [
        _count(sums, "n_judgments", "n_judgments"),
        _count(sums, "n_pairs", "n_pairs"),
        _count(sums, "n_ties", "n_ties"),
        _count(sums, "n_swapped_pairs", "n_swapped_pairs"),
        _count(
            sums, sums["n_swapped_pairs"] - sums["position_consistency_y"], "n_inconsistent_pairs"
        ),
        _count(sums, "n_self_judgments", "n_self_judgments"),
        _count(sums, "n_self_preference_ties", "n_self_preference_ties"),
        _rate(sums, "position_consistency_y", "n_swapped_pairs", "position_consistency"),
        _rate(sums, "first_slot_y", "first_slot_d", "first_slot_rate"),
        _rate(
            sums,
            "first_slot_inconsistent_y",
            "first_slot_inconsistent_d",
            "first_slot_rate_inconsistent",
        ),
        _rate(sums, "self_preference_y", "self_preference_d", "self_preference_rate"),
        _rate(sums, "self_preference_prob_y", "self_preference_prob_d", "self_preference_prob"),
        _rate(
            sums,
            sums["self_preference_y"] + 0.5 * sums["n_self_preference_ties"],
            "n_self_judgments",
            "self_preference_rate_ties_half",
        ),
        _rate(sums, "eo_recall_own_y", "eo_recall_own_d", "eo_recall_own"),
        _rate(sums, "eo_recall_other_y", "eo_recall_other_d", "eo_recall_other"),
        _count(sums, "eo_recall_own_y", EO_COUNTS[0]),
        _count(sums, sums["eo_recall_own_d"] - sums["eo_recall_own_y"], EO_COUNTS[1]),
        _count(sums, sums["eo_recall_other_d"] - sums["eo_recall_other_y"], EO_COUNTS[2]),
        _count(sums, "eo_recall_other_y", EO_COUNTS[3]),
    ]
    table = pd.concat(parts, axis=1)
    counts = ["n_judgments", "n_pairs", "n_ties", "n_swapped_pairs", "n_inconsistent_pairs"]
    for name in [*counts, "n_self_judgments", "n_self_preference_ties", *EO_COUNTS]:
        table[name] = table[name].fillna(0)
    table["eo_bias"] = table["eo_recall_own"] - table["eo_recall_other"]
    own = _cluster_sums(sums, "eo_recall_own_y", "eo_recall_own_d")
    other = _cluster_sums(sums, "eo_recall_other_y", "eo_recall_other_d")
    phi = pd.concat(
        [
            cluster_correlation(a, b, KEYS, "prompt")
            for a, b in zip(_both(own), _both(other), strict=True)
        ]
    )
    low, high = newcombe_difference(
        table["eo_recall_own"],
        table["eo_recall_own_ci_low"],
        table["eo_recall_own_ci_high"],
        table["eo_recall_other"],
        table["eo_recall_other_ci_low"],
        table["eo_recall_other_ci_high"],
        phi.reindex(table.index).fillna(0.0).to_numpy() if len(phi) else 0.0,
    )
    table["eo_bias_ci_low"], table["eo_bias_ci_high"] = low, high
    return table


def expand_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per judgment of the logit cells (columns kept, ``first`` 0/1): the
    n_first successes and the n_trials - n_first failures of each cell."""
    trials = cells["n_trials"].to_numpy(dtype=np.int64)
    firsts = cells["n_first"].to_numpy(dtype=np.int64)
    index = np.concatenate([np.repeat(np.arange(len(cells)), firsts),
                            np.repeat(np.arange(len(cells)), trials - firsts)])  # fmt: skip
    first = np.concatenate([np.ones(firsts.sum()), np.zeros((trials - firsts).sum())])
    rows = cells.drop(columns=["n_trials", "n_first"]).iloc[index].reset_index(drop=True)
    return rows.assign(first=first)


def _slopes(rows: pd.DataFrame, judges: np.ndarray) -> pd.DataFrame:
    """pairwise.length_slopes on the expanded cells, indexed by judge code."""
    code = pd.Index(judges).get_indexer(rows["judge"])
    w = pd.DataFrame(
        {
            "judge": code,
            "prompt": pd.factorize(rows["prompt_id"])[0],
            "first": rows["first"].to_numpy() == 1.0,
            "decisive": True,
        }
    )
    x = pd.to_numeric(rows["x"]).to_numpy(dtype=float)
    return length_slopes(w, x).set_index("judge")


def _kappas(kappa: pd.DataFrame, judges: np.ndarray, opponents: np.ndarray) -> pd.Series:
    """Cohen's kappa per judge x opponent code and pooled (code -2)."""
    if kappa.empty:
        return pd.Series(dtype=float)
    k = kappa.assign(
        judge=pd.Index(judges).get_indexer(kappa["judge"]),
        opponent=np.where(
            kappa["opponent"].isna(),
            NO_OPPONENT,
            pd.Index(opponents).get_indexer(kappa["opponent"]),
        ),
    )
    out = {}
    for part in _both(k):
        for key, group in part.groupby(KEYS):
            out[key] = cohens_kappa_table(
                group["verdict"].to_numpy(str),
                group["human_verdict"].to_numpy(str),
                group["n"].to_numpy(dtype=float),
            )
    return pd.Series(out, dtype=float)


def _given_human(rows: pd.DataFrame, judges: np.ndarray) -> dict[int, dict]:
    """The conditional logit of pairwise_human, pooled rows, per judge code."""
    keep = rows[rows["human_any"].astype(bool) & rows["x"].notna()]
    return {
        int(pd.Index(judges).get_loc(name)): given_human_fit(
            part["human_code"].to_numpy(float),
            part["x"].to_numpy(float),
            part["first"].to_numpy(float),
            part["prompt_id"].to_numpy(),
        )  # fmt: skip
        for name, part in keep.groupby("judge", sort=True)
    }


def _human_table(sums: pd.DataFrame, kappa: pd.DataFrame, rows: pd.DataFrame,
                 judges: np.ndarray, opponents: np.ndarray) -> pd.DataFrame:  # fmt: skip
    """pairwise_human.human_verdict_columns (all verdicts), indexed by codes."""
    parts = [
        _count(sums, "n_invalid", "n_invalid"),
        _count(sums, "n_swapped_pairs_with_invalid", "n_swapped_pairs_with_invalid"),
        _count(sums, "n_human_judgments", "n_human_judgments"),
        _rate(sums, "n_invalid", "n_all", "invalid_rate"),
        _rate(
            sums,
            "position_consistency_strict_y",
            "n_swapped_pairs_all",
            "position_consistency_invalid_inconsistent",
        ),
        _rate(
            sums,
            "position_consistency_llmbar_y",
            "n_swapped_pairs_all",
            "position_consistency_llmbar",
        ),  # fmt: skip
        _rate(sums, "accuracy_y", "accuracy_d", "accuracy"),
        _rate(sums, "accuracy_with_invalid_y", "accuracy_with_invalid_d", "accuracy_with_invalid"),
        _rate(sums, "prefer_longer_y", "prefer_longer_d", "p_prefer_longer"),
        _rate(sums, "human_prefer_longer_y", "human_prefer_longer_d", "human_p_prefer_longer"),
    ]
    # every group with a judgment, valid or not (rate_table(w, "invalid") in the rows route)
    groups = _count(sums, "n_all", "_n_all")
    table = pd.concat([groups, *parts], axis=1).drop(columns="_n_all")
    for name in ("n_invalid", "n_swapped_pairs_with_invalid", "n_human_judgments"):
        table[name] = table[name].fillna(0)
    table["kappa"] = _kappas(kappa, judges, opponents).reindex(table.index)
    table = table.reset_index()
    fits = _given_human(rows, judges)
    given_human_columns(table, fits, (table["opponent"] == POOLED).to_numpy())
    return table[["judge", "opponent", *HUMAN_COLUMNS, GIVEN_HUMAN_NOTE]]


def pairwise_bias_from_aggregates(
    sums: pd.DataFrame, cells: pd.DataFrame, kappa: pd.DataFrame
) -> pd.DataFrame:
    """The pairwise_bias mart (``pairwise_human.WITH_HUMAN_COLUMNS``) from
    int_pairwise_prompt_sums, int_pairwise_logit_cells and int_pairwise_kappa_counts."""
    if sums.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in WITH_HUMAN_COLUMNS.items()})
    # SQL gives rows in no fixed order: the fits' row order is made fixed here
    cells_all = cells
    cells = cells[cells["decisive"].astype(bool)].sort_values(
        ["judge", "prompt_id", "x", "own_code", "human_code", "human_any"]
    )
    sums = sums.sort_values(["judge", "opponent", "prompt_id"], na_position="first")
    kappa = kappa.sort_values(["judge", "opponent", "verdict", "human_verdict"])
    sums, judges, opponents = _coded(sums)
    rows = expand_cells(cells.drop(columns="decisive"))
    slopes = _slopes(rows[rows["x"].notna()], judges)
    # judges whose ties have lengths (their decisive verdicts may lack them)
    tied = cells_all[~cells_all["decisive"].astype(bool) & cells_all["x"].notna()]["judge"]
    ties_with_lengths = set(np.flatnonzero(np.isin(judges, tied.unique())).tolist())
    base = _base_table(sums).reset_index()
    pooled = base["opponent"] == POOLED
    for col in ("n_length_judgments", "length_slope", "length_slope_ci_low",
                "length_slope_ci_high"):  # fmt: skip
        base[col] = np.where(pooled, base["judge"].map(slopes[col]), np.nan)
    base["notes"] = mart_notes(base, slopes, POOLED, ties_with_lengths)
    extra = _human_table(sums, kappa, rows, judges, opponents)
    table = base.merge(extra, on=KEYS, how="outer")
    table["notes"] = with_given_human_note(table)
    for name in ("n_pairs", "n_judgments", "n_ties", "n_swapped_pairs",
                 "n_inconsistent_pairs", "n_self_judgments"):  # fmt: skip
        table[name] = table[name].fillna(0)
    table["ci_method"] = WITH_HUMAN_CI
    is_pooled = table["opponent"] == POOLED
    table["judge"] = judges[table["judge"].to_numpy()]
    # opponent names, `all` for the pooled rows (code -2; no opponent at all when no
    # pair holds a judge's own model)
    names = np.append(opponents, ALL)
    table["opponent"] = names[np.where(is_pooled, len(opponents), table["opponent"].to_numpy())]
    table = table.sort_values(KEYS, key=lambda s: s.str.lower())
    return (
        table.reset_index(drop=True)
        .reindex(columns=list(WITH_HUMAN_COLUMNS))
        .astype(WITH_HUMAN_COLUMNS)
    )


def joint_bias_from_cells(
    cells: pd.DataFrame, marginal: pd.DataFrame | None = None
) -> pd.DataFrame:
    """pairwise_human.joint_bias from int_pairwise_logit_cells: per judge, the joint
    logit of its decisive valid judgments; ``marginal`` as joint_bias takes it."""
    if cells.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in JOINT_COLUMNS.items()})
    cells = cells.sort_values(
        ["judge", "prompt_id", "decisive", "x", "own_code", "human_code", "human_any"]
    )
    out = []
    for judge, part in cells.groupby("judge", sort=True):
        decisive = part["decisive"].astype(bool).to_numpy()
        rows = expand_cells(part[decisive])
        # the ties (valid, not decisive): what the notes say when the fit has none
        own_cell = part["own_code"].to_numpy(dtype=float) != 0
        trials = part["n_trials"].to_numpy(dtype=np.int64)
        n_ties, n_own_ties = int(trials[~decisive].sum()), int(trials[~decisive & own_cell].sum())
        n_own_decisive = int(np.count_nonzero(rows["own_code"].to_numpy(dtype=float)))
        notes = []
        has_x = rows["x"].notna().to_numpy()
        use_length = bool(has_x.any())
        if use_length:
            if (~has_x).any():
                notes.append(f"{int((~has_x).sum())} judgments without lengths left out")
            rows = rows[has_x]
        else:
            ties_x = part["x"].notna().to_numpy() & ~decisive
            notes.append(no_length_term_note(len(rows), bool(ties_x.any())))
        o = rows["own_code"].to_numpy(dtype=float)
        use_own = bool(np.any(o != 0))
        if not use_own:
            notes.append(no_own_pair_note(n_own_decisive, n_own_ties))
        human_any = rows["human_any"].to_numpy(dtype=bool)
        use_human = bool(human_any.size and human_any.all())
        if human_any.any() and not use_human:
            notes.append(
                f"human verdicts on {int(human_any.sum())} of {human_any.size}: term left out"
            )
        elif not human_any.any():
            notes.append(no_human_verdict_note(human_any.size))
        names, cols = ["position_logodds"], [np.ones(len(rows))]
        for flag, name, col in (
            (use_own, "self_preference_logodds", o),
            (use_length, "length_slope", rows["x"].to_numpy(dtype=float)),
            (use_human, "human_verdict_logodds", rows["human_code"].to_numpy(dtype=float)),
        ):
            if flag:
                names.append(name)
                cols.append(col)
        terms, note = fit_terms(
            np.column_stack(cols), rows["first"].to_numpy(dtype=float),
            rows["prompt_id"].to_numpy(), names,
        )  # fmt: skip
        if note:
            notes.append(note)
        if rows.empty:
            notes = [all_ties_note(n_ties)]
        out.append(
            {
                "judge": judge,
                "n_judgments": len(rows),
                "n_own_judgments": int((o != 0).sum()),
                "uses_human_verdict": use_human,
                **terms,
                "ci_method": JOINT_CI,
                "notes": "; ".join(notes) or None,
            }
        )
    table = pd.DataFrame(out).reindex(columns=list(JOINT_COLUMNS))
    if marginal is not None and len(marginal):
        m = marginal.set_index("judge")
        table["self_preference_rate"] = table["judge"].map(m["self_preference_rate"])
        table["length_slope_unconditional"] = table["judge"].map(m["length_slope"])
    return table.astype(JOINT_COLUMNS)


def perplexity_bins_from_cells(
    cells: pd.DataFrame, n_bins: int = N_PERPLEXITY_BINS
) -> pd.DataFrame:
    """pairwise.perplexity_bins from int_pairwise_perplexity_cells: each judge's
    quantile bins of the log-perplexity difference (over its judgments, each cell
    counted n_judgments times) and the first-slot rates of the judge and the humans."""
    if cells.empty:
        return pd.DataFrame(columns=list(PERPLEXITY_BIN_COLUMNS)).astype(PERPLEXITY_BIN_COLUMNS)
    cells = cells.sort_values(["judge", "prompt_id", "log_ppl_diff"]).reset_index(drop=True)
    judge, judges = pd.factorize(cells["judge"], sort=True)
    diff = cells["log_ppl_diff"].to_numpy(dtype=float)
    weight = cells["n_judgments"].to_numpy(dtype=np.int64)
    bins = np.zeros(len(cells), dtype=np.int64)
    edges = {}
    for code in range(len(judges)):
        idx = np.flatnonzero(judge == code)
        d = np.repeat(diff[idx], weight[idx])
        cut = np.unique(np.quantile(d, np.linspace(0, 1, n_bins + 1)))
        if len(cut) == 1:
            cut = np.array([cut[0], cut[0]])
        bins[idx] = np.clip(np.searchsorted(cut, diff[idx], side="right") - 1, 0, len(cut) - 2)
        edges[code] = cut
    sums = cells.assign(judge=judge, opponent=bins, prompt_id=pd.factorize(cells["prompt_id"])[0])

    def rate(y: str, d: str, name: str) -> pd.DataFrame:
        units = _cluster_sums(sums, y, d)
        table = clustered_rates(units, KEYS, "prompt")
        return table.rename(
            columns={"rate": name, "ci_low": f"{name}_ci_low", "ci_high": f"{name}_ci_high"}
        ).drop(columns=["n", "n_eff"])

    def count(col: str, name: str) -> pd.Series:
        part = sums[sums[col] > 0]
        return part.groupby(KEYS)[col].sum().rename(name)

    table = pd.concat(
        [
            count("n_decisive", "n_judgments"),
            count("n_human_decisive", "n_human"),
            rate("n_first", "n_decisive", "judge_first_rate"),
            rate("n_human_first", "n_human_decisive", "human_first_rate"),
        ],
        axis=1,
    ).reset_index()
    table["n_judgments"] = table["n_judgments"].fillna(0)
    table["n_human"] = table["n_human"].fillna(0)
    keys = list(zip(table["judge"], table["opponent"], strict=True))
    table["log_ppl_diff_low"] = [edges[j][b] for j, b in keys]
    table["log_ppl_diff_high"] = [edges[j][b + 1] for j, b in keys]
    table["bin"] = table["opponent"] + 1
    table["judge"] = np.asarray(judges, dtype=object)[table["judge"].to_numpy()]
    table["ci_method"] = PERPLEXITY_CI
    table = table.sort_values(["judge", "bin"])
    return (
        table.reset_index(drop=True)
        .reindex(columns=list(PERPLEXITY_BIN_COLUMNS))
        .astype(PERPLEXITY_BIN_COLUMNS)
    )
