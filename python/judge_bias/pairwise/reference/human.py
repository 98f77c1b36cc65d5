"""Pairwise bias measured against human verdicts, and invalid verdicts.

A judge's bias is its departure from the human verdict: on LLMBar the gold
answer is the longer one in only a quarter of the items, so an unconditional
length slope measures the data, not the judge. Columns added to
``pairwise_bias`` (per judge x opponent and pooled ``all``; logistic fits on
the pooled row only), from the accepted rows plus the rows kept as
``invalid`` (an unparseable verdict, still listed in rejected_rows):

- invalid_rate: invalid verdicts / all judgments (valid + invalid).
- position_consistency_invalid_inconsistent: among pairs asked in both
  orders, invalid verdicts included, the share whose two verdicts name the
  same completion (or are both ties); a pair with an invalid verdict counts
  as inconsistent. position_consistency_llmbar: LLMBar's ``equal`` (Zeng et
  al., evaluate.py): an invalid verdict is a value like any other, so two
  invalid verdicts agree and one invalid verdict disagrees. The existing
  position_consistency leaves every pair with an invalid verdict out.
- accuracy: among valid judgments with a human verdict, the share equal to
  it, ties included as a third category (a judge tie when the human decided
  is wrong, a judge tie on a human tie is right). accuracy_with_invalid: the
  same with invalid verdicts counted as wrong (LLMBar's correct_average).
- kappa: Cohen's kappa between the judge's and the human verdict over the
  categories first / second / tie (valid judgments with a human verdict);
  point estimate only.
- p_prefer_longer / human_p_prefer_longer (AlpacaEval's "Proba. prefer
  longer"): among decisive verdicts of pairs whose two lengths differ, the
  share choosing the longer completion; for the judge (ties and invalid
  verdicts left out) and for the human verdicts of the same rows. AlpacaEval
  counts characters and needs a difference above 30 characters; here the
  warehouse's length_tokens and any difference.
- first_slot_rate_given_human, length_slope_given_human: the logistic fit
  logit P(first chosen) = b0 + b_h * h + b_len * x on decisive valid
  judgments with a human verdict and a known length feature x
  (``pairwise_features``), h = +1 when the human chose the first slot, -1
  the second, 0 a tie. expit(b0) is the first-slot rate when the human
  verdict pulls neither way and the lengths are equal; b_len is the judge's
  length preference beyond what the human verdicts explain. length_slope
  (unchanged, without h) is the unconditional slope.

``joint_bias`` (mart pairwise_joint_bias): per judge, one logistic fit of
logit P(first) = b0 + b_own * o + b_len * x [+ b_h * h], o = +1 when the
judge's own completion is first, -1 when second, 0 when the pair does not
hold it: self-preference and length preference each holding the other (and
the position, and the human verdict when every row has one) fixed.

Intervals: rates are Wilson with a design-effect n, clusters = prompts
(``intervals.clustered_rates``); logistic coefficients are Wald with the
prompt-clustered sandwich (CR1 with statsmodels' small-sample factor
G/(G-1) * (N-1)/(N-K)), equal to statsmodels Logit with cov_type='cluster'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa

from judge_bias.pairwise.columns import (
    ALL,
    GIVEN_HUMAN_NOTE,
    HUMAN_COLUMNS,
    INVALID,
    JOINT_CI,
    JOINT_COLUMNS,
    LOGIT_TERMS,
    WITH_HUMAN_CI,
    WITH_HUMAN_COLUMNS,
    all_ties_note,
    no_human_verdict_note,
    no_length_term_note,
    no_own_pair_note,
)
from judge_bias.pairwise.reference.logit import logit_terms
from judge_bias.pairwise.reference.rates import (
    count_table,
    length_feature,
    pairwise_bias,
    prepare,
    rate_table,
)
from judge_bias.stats.numeric import to_float


def kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two label vectors (statsmodels on their contingency table)."""
    labels = sorted(set(a) | set(b))
    if not labels:
        return float("nan")
    table = pd.crosstab(
        pd.Categorical(a, categories=labels), pd.Categorical(b, categories=labels), dropna=False
    ).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        value = float(statsmodels_kappa(table).kappa)
    return value if np.isfinite(value) else float("nan")


def given_human(h: np.ndarray, x: np.ndarray, first: np.ndarray, prompt: np.ndarray) -> dict:
    """One judge's fit logit P(first) = b0 + b_h h + b_len x: the *_given_human
    columns (first_slot_rate_given_human = expit(b0) and its interval's ends), or
    its note under ``GIVEN_HUMAN_NOTE``."""
    terms, why = logit_terms(
        np.column_stack([np.ones(len(h)), h, x]), first, prompt,
        ["b0", "b_h", "length_slope_given_human"], ["position", "human_verdict", "length"],
    )  # fmt: skip
    out: dict = {"n_given_human_judgments": len(h)}
    if why is not None:
        out[GIVEN_HUMAN_NOTE] = f"*_given_human {why}"
        return out
    for end in ("", "_ci_low", "_ci_high"):
        out["length_slope_given_human" + end] = terms["length_slope_given_human" + end]
        out["first_slot_rate_given_human" + end] = float(expit(terms["b0" + end]))
    return out


def joined_notes(table: pd.DataFrame) -> list[str | None]:
    """``notes`` and the given-human fit's note, joined with '; '."""
    return [
        "; ".join(n for n in (a, b) if isinstance(n, str)) or None
        for a, b in zip(table["notes"].tolist(), table[GIVEN_HUMAN_NOTE].tolist(), strict=True)
    ]


def _working(rows: pd.DataFrame) -> pd.DataFrame:
    """prepare() plus invalid flags, the length feature and the human code h."""
    w = prepare(rows)
    verdict = rows["verdict"].to_numpy(dtype=object)
    w["invalid"] = verdict == INVALID
    w["x"] = length_feature(rows, w)
    hv = rows["human_verdict"].to_numpy(dtype=object) if "human_verdict" in rows else None
    if hv is None:
        hv = np.full(len(rows), None, dtype=object)
    w["human_any"] = pd.Series(hv).isin(["first", "second", "tie"]).to_numpy()
    w["h"] = np.where(hv == "first", 1.0, np.where(hv == "second", -1.0, 0.0))
    w["verdict_label"] = verdict
    w["human_label"] = hv
    return w


def _self_code(rows: pd.DataFrame) -> np.ndarray:
    first = rows["is_self_first"].fillna(False).to_numpy(dtype=bool)
    second = rows["is_self_second"].fillna(False).to_numpy(dtype=bool)
    return np.where(first, 1.0, np.where(second, -1.0, 0.0))


def human_verdict_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """The columns above per judge x opponent and pooled, keyed by judge and
    opponent names (``all`` pooled). ``rows``: accepted rows and rows kept as
    ``invalid`` (verdict = 'invalid')."""
    w = _working(rows)
    judges, models = w.attrs["judges"], w.attrs["models"]
    valid = w[~w["invalid"]]
    # pairs with both orders, invalid verdicts included: chosen -3 for invalid
    chosen = np.where(w["invalid"], -3, w["chosen"])
    g = pd.DataFrame(
        {"pair": w["pair"], "judge": w["judge"], "opponent": w["opponent"],
         "prompt": w["prompt"], "chosen": chosen, "invalid": w["invalid"]}
    ).groupby("pair", sort=False)  # fmt: skip
    pairs = pd.DataFrame(
        {
            "judge": g["judge"].first(),
            "opponent": g["opponent"].first(),
            "prompt": g["prompt"].first(),
            "size": g.size(),
            "same": g["chosen"].min() == g["chosen"].max(),
            "any_invalid": g["invalid"].any(),
        }
    )
    pairs = pairs[pairs["size"] >= 2]
    pairs["strict"] = pairs["same"] & ~pairs["any_invalid"]
    with_human = valid[valid["human_any"]]
    all_human = w[w["human_any"]]
    lf = to_float(rows.get("length_first"), "length_first", len(rows))
    ls = to_float(rows.get("length_second"), "length_second", len(rows))
    unequal = np.isfinite(lf) & np.isfinite(ls) & (lf != ls)
    first_longer = lf > ls
    judge_units = w[unequal & w["decisive"].to_numpy() & ~w["invalid"].to_numpy()]
    human_sel = unequal & w["human_decisive"].to_numpy()
    human_units = w[human_sel]
    parts = [
        count_table(w[w["invalid"]], "n_invalid"),
        count_table(pairs[pairs["any_invalid"]], "n_swapped_pairs_with_invalid"),
        count_table(with_human, "n_human_judgments"),
        rate_table(w, "invalid", "invalid_rate"),
        rate_table(pairs, "strict", "position_consistency_invalid_inconsistent"),
        rate_table(pairs, "same", "position_consistency_llmbar"),
        rate_table(
            with_human,
            (with_human["verdict_label"] == with_human["human_label"]).to_numpy(),
            "accuracy",
        ),
        rate_table(
            all_human,
            (all_human["verdict_label"] == all_human["human_label"]).to_numpy(),
            "accuracy_with_invalid",
        ),
        rate_table(
            judge_units,
            (judge_units["first"].to_numpy() == first_longer[judge_units.index]),
            "p_prefer_longer",
        ),
        rate_table(
            human_units,
            (human_units["human_first"].to_numpy() == first_longer[human_sel]),
            "human_p_prefer_longer",
        ),
    ]
    table = pd.concat(parts, axis=1)
    table = table[[c for c in table.columns if not c.startswith("_n_")]]
    for name in ("n_invalid", "n_swapped_pairs_with_invalid", "n_human_judgments"):
        table[name] = table[name].fillna(0)
    kappas = {}
    for (judge, opponent), part in with_human.groupby(["judge", "opponent"]):
        if opponent >= 0:
            kappas[(judge, opponent)] = kappa(
                part["verdict_label"].to_numpy(str), part["human_label"].to_numpy(str)
            )
    for judge, part in with_human.groupby("judge"):
        kappas[(judge, -2)] = kappa(
            part["verdict_label"].to_numpy(str), part["human_label"].to_numpy(str)
        )
    table["kappa"] = pd.Series(kappas).reindex(table.index)
    table = table.reset_index()
    # the conditional logistic fit, pooled rows
    fits = {}
    keep = (w["decisive"] & ~w["invalid"] & w["human_any"]).to_numpy() & np.isfinite(w["x"])
    for judge in np.unique(w["judge"].to_numpy()[keep]):
        sel = keep & (w["judge"].to_numpy() == judge)
        fits[judge] = given_human(
            w["h"].to_numpy()[sel], w["x"].to_numpy()[sel],
            w["first"].to_numpy()[sel].astype(float), w["prompt"].to_numpy()[sel],
        )  # fmt: skip
    pooled = table["opponent"] == -2
    fitted = pd.DataFrame.from_dict(fits, orient="index")
    for col in ("n_given_human_judgments", GIVEN_HUMAN_NOTE) + tuple(
        term + end for term in LOGIT_TERMS for end in ("", "_ci_low", "_ci_high")
    ):
        on_judge = table["judge"].map(fitted[col]) if col in fitted else np.nan
        table[col] = pd.Series(on_judge, index=table.index).where(pooled)
    table["judge"] = judges[table["judge"].to_numpy()]
    table["opponent"] = np.where(pooled, ALL, models[np.maximum(table["opponent"].to_numpy(), 0)])
    return table[["judge", "opponent", *HUMAN_COLUMNS, GIVEN_HUMAN_NOTE]]


def joint_bias(rows: pd.DataFrame, marginal: pd.DataFrame | None = None) -> pd.DataFrame:
    """pairwise_joint_bias: per judge, the joint logistic fit of the module
    docstring on its decisive valid judgments with a known length feature;
    ``marginal`` (pairwise_bias pooled rows: judge, self_preference_rate,
    length_slope) is put beside it."""
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in JOINT_COLUMNS.items()})
    w = _working(rows)
    judges = w.attrs["judges"]
    own = _self_code(rows)
    out = []
    for judge in np.unique(w["judge"].to_numpy()):
        mine = (w["judge"].to_numpy() == judge) & ~w["invalid"].to_numpy()
        if not mine.any():
            # no valid verdict: no row, as in the mart (its cells are valid judgments)
            continue
        sel = mine & w["decisive"].to_numpy()
        # the ties (valid, not decisive): what the notes say when the fit has none
        ties = mine & ~w["decisive"].to_numpy()
        n_own_ties = int(np.count_nonzero(own[ties]))
        n_own_decisive = int(np.count_nonzero(own[sel]))
        notes = []
        has_x = np.isfinite(w["x"].to_numpy())
        use_length = bool((sel & has_x).any())
        if use_length:
            if (sel & ~has_x).any():
                notes.append(f"{int((sel & ~has_x).sum())} judgments without lengths left out")
            sel &= has_x
        else:
            notes.append(no_length_term_note(int(sel.sum()), bool((ties & has_x).any())))
        o = own[sel]
        use_own = bool(np.any(o != 0))
        if not use_own:
            notes.append(no_own_pair_note(n_own_decisive, n_own_ties))
        human_any = w["human_any"].to_numpy()[sel]
        use_human = bool(human_any.size and human_any.all())
        if human_any.any() and not use_human:
            notes.append(
                f"human verdicts on {int(human_any.sum())} of {human_any.size}: term left out"
            )
        elif not human_any.any():
            notes.append(no_human_verdict_note(human_any.size))
        names, cols = ["position_logodds"], [np.ones(sel.sum())]
        for flag, name, col in (
            (use_own, "self_preference_logodds", o),
            (use_length, "length_slope", w["x"].to_numpy()[sel]),
            (use_human, "human_verdict_logodds", w["h"].to_numpy()[sel]),
        ):
            if flag:
                names.append(name)
                cols.append(col)
        terms, note = logit_terms(
            np.column_stack(cols), w["first"].to_numpy()[sel].astype(float),
            w["prompt"].to_numpy()[sel], names, names,
        )  # fmt: skip
        if note:
            notes.append(note)
        if not sel.any():
            notes = [all_ties_note(int(ties.sum()))]
        record: dict[str, object] = dict(terms)
        record.update(
            judge=judges[judge], n_judgments=int(sel.sum()), ci_method=JOINT_CI,
            n_own_judgments=int(np.count_nonzero(o)), uses_human_verdict=use_human,
            notes="; ".join(notes) or None,
        )  # fmt: skip
        out.append(record)
    table = pd.DataFrame(out, columns=list(JOINT_COLUMNS))
    if marginal is not None and len(marginal):
        beside = marginal.rename(columns={"length_slope": "length_slope_unconditional"})
        beside = beside.set_index("judge").reindex(table["judge"])
        for col in ("self_preference_rate", "length_slope_unconditional"):
            table[col] = beside[col].to_numpy()
    return table.astype(JOINT_COLUMNS)


def pairwise_bias_with_human(rows: pd.DataFrame) -> pd.DataFrame:
    """The pairwise_bias mart: pairwise.pairwise_bias on the valid rows (invalid
    verdicts left out of every existing column) beside human_verdict_columns on
    all rows. A judge with invalid verdicts only still gets a row."""
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in WITH_HUMAN_COLUMNS.items()})
    invalid = (rows["verdict"] == INVALID).to_numpy()
    base = pairwise_bias(rows[~invalid])
    extra = human_verdict_columns(rows)
    table = base.merge(extra, on=["judge", "opponent"], how="outer")
    table["notes"] = joined_notes(table)
    for name in ("n_pairs", "n_judgments", "n_ties", "n_swapped_pairs",
                 "n_inconsistent_pairs", "n_self_judgments"):  # fmt: skip
        table[name] = table[name].fillna(0)
    table["ci_method"] = WITH_HUMAN_CI
    table = table.sort_values(["judge", "opponent"], key=lambda s: s.str.lower())
    return (
        table.reset_index(drop=True)
        .reindex(columns=list(WITH_HUMAN_COLUMNS))
        .astype(WITH_HUMAN_COLUMNS)
    )
