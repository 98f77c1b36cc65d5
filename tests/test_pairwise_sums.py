"""The pairwise marts from the SQL aggregates (int_pairwise_* models, what the dbt
models read since issue 17) equal the same marts computed from the rows
(pairwise_human.pairwise_bias_with_human, joint_bias, pairwise.perplexity_bins, the
route the statistics tests check against statsmodels and hand counts)."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.bench.pairwise import simulate_pairwise_rows
from judge_bias.pairwise.reference.human import joint_bias, pairwise_bias_with_human
from judge_bias.pairwise.reference.rates import perplexity_bins
from judge_bias.pairwise.sums import (
    joint_bias_from_cells,
    pairwise_bias_from_aggregates,
    perplexity_bins_from_cells,
)
from tests.sql_models import render

AGGREGATES = [
    "int_pairwise_prompt_sums",
    "int_pairwise_logit_cells",
    "int_pairwise_kappa_counts",
    "int_pairwise_perplexity_cells",
]


def checked_rows(seed: int, n_rows: int = 6000, tie_prob: float = 0.1) -> pd.DataFrame:
    """int_pairwise_checked-shaped rows: simulated judgments with ties, some kept as
    invalid (their verdict as given), some rejected, human verdicts with ties and
    gaps, missing lengths and p_first, repeated runs, unknown perplexities, a judge
    with ties only."""
    rng = np.random.default_rng(seed)
    rows = simulate_pairwise_rows(n_rows, seed=seed, tie_prob=tie_prob, n_prompts=120)
    rows = rows.drop(columns=[c for c in ("x_true",) if c in rows])
    n = len(rows)
    human = rows["human_verdict"].to_numpy(dtype=object)
    human[rng.random(n) < 0.1] = "tie"
    human[rng.random(n) < 0.1] = None
    rows["human_verdict"] = human
    rows.loc[rng.random(n) < 0.05, "length_first"] = np.nan
    rows.loc[rng.random(n) < 0.2, "p_first"] = np.nan
    rows.loc[rng.random(n) < 0.1, "perplexity_second"] = np.nan
    # a second run of some judgments, same pair keys but for the run
    again = rows.sample(frac=0.1, random_state=seed).copy()
    again["run_id"] = "2"
    again["pair_key"] = again["pair_key"].str.replace(r"\|1$", "|2", regex=True)
    rows = pd.concat([rows, again], ignore_index=True)
    rows["reject_code"] = None
    rows["kept_as_invalid"] = False
    invalid = rng.random(len(rows)) < 0.03
    rows.loc[invalid, ["reject_code", "kept_as_invalid"]] = ["invalid_value", True]
    rows.loc[invalid, "verdict"] = "[[C]]"
    rejected = rng.random(len(rows)) < 0.02
    rows.loc[rejected & ~invalid, "reject_code"] = "unknown_model"
    ties_only = (
        rows[rows["judge"] == "judge-d"]
        .head(4)
        .assign(judge="judge-t", verdict="tie", reject_code=None, kept_as_invalid=False)
    )
    ties_only["pair_key"] = ties_only["pair_key"] + "t"
    return pd.concat([rows, ties_only], ignore_index=True)


def aggregates(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    con = duckdb.connect()
    con.register("int_pairwise_checked", rows)
    con.execute(f"create table int_pairwise_flags as {render('int_pairwise_flags')}")
    # SQL gives rows in no fixed order: shuffle to prove the marts do not depend on it
    return {
        name: con.sql(render(name)).df().sample(frac=1.0, random_state=1).reset_index(drop=True)
        for name in AGGREGATES
    }


def _equal(got: pd.DataFrame, ref: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True), ref.reset_index(drop=True), atol=1e-12, rtol=1e-10
    )


@pytest.mark.parametrize(("seed", "own_pairs"), [(1, True), (2, True), (3, False)])
def test_marts_from_aggregates_equal_the_marts_from_rows(seed: int, own_pairs: bool) -> None:
    rows = checked_rows(seed)
    if not own_pairs:  # LLMBar's shape: no pair holds a judge's own model
        rows = rows.assign(is_self_first=False, is_self_second=False)
    agg = aggregates(rows)
    listed = rows[rows["reject_code"].isna() | rows["kept_as_invalid"]].assign(
        verdict=lambda f: f["verdict"].where(~f["kept_as_invalid"], "invalid")
    )
    accepted = rows[rows["reject_code"].isna()]
    bias = pairwise_bias_from_aggregates(
        agg["int_pairwise_prompt_sums"], agg["int_pairwise_logit_cells"],
        agg["int_pairwise_kappa_counts"],
    )  # fmt: skip
    ref = pairwise_bias_with_human(listed)
    _equal(bias, ref)
    assert bias["n_invalid"].sum() > 0 and bias["length_slope"].notna().any()
    assert bias["kappa"].notna().any() and "judge-t" in set(bias["judge"])
    assert (bias["opponent"] != "all").any() == own_pairs
    marginal = ref.loc[ref["opponent"] == "all", ["judge", "self_preference_rate", "length_slope"]]
    _equal(
        joint_bias_from_cells(agg["int_pairwise_logit_cells"], marginal),
        joint_bias(accepted, marginal),
    )
    _equal(
        perplexity_bins_from_cells(agg["int_pairwise_perplexity_cells"]), perplexity_bins(accepted)
    )
    # the aggregates are smaller than the rows they stand for
    assert len(agg["int_pairwise_prompt_sums"]) < len(rows) / 3


def test_empty_aggregates_give_empty_typed_marts() -> None:
    rows = checked_rows(3).iloc[:0]
    agg = aggregates(rows)
    bias = pairwise_bias_from_aggregates(
        agg["int_pairwise_prompt_sums"], agg["int_pairwise_logit_cells"],
        agg["int_pairwise_kappa_counts"],
    )  # fmt: skip
    _equal(bias, pairwise_bias_with_human(rows))
    _equal(joint_bias_from_cells(agg["int_pairwise_logit_cells"]), joint_bias(rows))
    assert perplexity_bins_from_cells(agg["int_pairwise_perplexity_cells"]).empty


def _bias_both_routes(rows: pd.DataFrame, listed: pd.DataFrame) -> list[pd.DataFrame]:
    """pairwise_bias from the SQL aggregates of ``rows`` and from the rows
    (``listed``: the accepted rows and those kept as invalid)."""
    agg = aggregates(rows)
    return [
        pairwise_bias_from_aggregates(
            agg["int_pairwise_prompt_sums"], agg["int_pairwise_logit_cells"],
            agg["int_pairwise_kappa_counts"],
        ),
        pairwise_bias_with_human(listed),
    ]  # fmt: skip


def test_self_preference_with_ties_one_half_equals_a_hand_count() -> None:
    """self_preference_rate_ties_half (AlpacaEval's rule: a tie half a win) on seven
    judgments counted by hand, both routes: judge J's own pairs hold 2 own picks,
    1 loss and 2 ties (an invalid verdict and a pair without J's model left out):
    (2 + 2/2) / 5 = 0.6, where self_preference_rate (ties out) is 2/3."""
    judgments = [  # prompt, first, second, verdict
        ("p1", "J", "O", "first"),  # own pick
        ("p1", "O", "J", "tie"),
        ("p2", "J", "O", "tie"),
        ("p2", "O", "J", "first"),  # the other's pick
        ("p3", "O", "J", "second"),  # own pick
        ("p3", "O", "P", "tie"),  # no own completion: pooled n_ties only
        ("p4", "J", "O", "invalid"),  # kept as invalid: in no rate here
    ]
    rows = pd.DataFrame(
        [
            {
                "judge": "J", "prompt_id": p, "model_first": a, "model_second": b,
                "run_id": "1", "verdict": "first" if v == "invalid" else v,
                "p_first": np.nan, "human_verdict": None,
                "perplexity_first": np.nan, "perplexity_second": np.nan,
                "length_first": np.nan, "length_second": np.nan,
                "is_self_first": a == "J", "is_self_second": b == "J",
                "pair_key": f"J|{p}|{min(a, b)}|{max(a, b)}|1", "has_swapped": False,
                "reject_code": "invalid_value" if v == "invalid" else None,
                "kept_as_invalid": v == "invalid",
            }
            for p, a, b, v in judgments
        ]
    )  # fmt: skip
    listed = rows.assign(verdict=rows["verdict"].where(~rows["kept_as_invalid"], "invalid"))
    for table in _bias_both_routes(rows, listed):
        got = table.set_index("opponent")
        for opponent in ("O", "all"):
            row = got.loc[opponent]
            assert row["n_self_judgments"] == 5 and row["n_self_preference_ties"] == 2
            assert row["self_preference_rate"] == pytest.approx(2 / 3, abs=1e-15)
            assert row["self_preference_rate_ties_half"] == pytest.approx(0.6, abs=1e-15)
            low = row["self_preference_rate_ties_half_ci_low"]
            assert low < 0.6 < row["self_preference_rate_ties_half_ci_high"]
        assert got.loc["all", "n_ties"] == 3 and got.loc["O", "n_ties"] == 2


def test_a_null_human_verdict_term_says_why_in_the_joint_notes() -> None:
    """pairwise_joint_bias.human_verdict_logodds is null when the term is left out
    (uses_human_verdict false): notes says why, both routes, of the judgments the fit
    takes (decisive, valid, with lengths). A judge without any human verdict gets
    "no human verdict on the N judgments fitted"; judge-t, whose judgments are all
    ties (with human verdicts), only "all 4 verdicts are ties"; a judge whose human verdicts
    sit only on judgments left out for missing lengths, the first note, its N the
    judgments with lengths (review21c D2); with human verdicts on some judgments,
    the count; with one on every judgment, the term and none of these notes."""
    rows = checked_rows(4, n_rows=2000)
    judges = sorted(j for j in rows["judge"].unique() if j != "judge-t")
    none, every, lengthless = judges[:3]
    rows.loc[rows["judge"] == none, "human_verdict"] = None
    mine = rows["judge"] == every
    rows.loc[mine, "human_verdict"] = rows.loc[mine, "human_verdict"].fillna("first")
    rows.loc[rows["judge"] == "judge-t", "human_verdict"] = "second"
    mine = rows["judge"] == lengthless
    no_length = rows["length_first"].isna() | rows["length_second"].isna()
    rows.loc[mine, "human_verdict"] = np.where(no_length[mine], "first", None)
    accepted = rows[rows["reject_code"].isna()]
    fitted = accepted[
        accepted["verdict"].isin(["first", "second"]) & ~accepted["kept_as_invalid"].astype(bool)
    ]
    by_judge = fitted.groupby("judge")
    with_lengths = ~(fitted["length_first"].isna() | fitted["length_second"].isna())
    n_fitted = {j: int((with_lengths & (fitted["judge"] == j)).sum()) for j in (none, lengthless)}
    # the premises: judge-t has human verdicts and no decisive one; lengthless has
    # decisive human verdicts, all on judgments without lengths
    assert "judge-t" not in by_judge.groups
    assert accepted.loc[accepted["judge"] == "judge-t", "human_verdict"].notna().all()
    assert by_judge.get_group(lengthless)["human_verdict"].notna().sum() > 0
    assert 0 < n_fitted[lengthless] < len(by_judge.get_group(lengthless))
    cells = aggregates(rows)["int_pairwise_logit_cells"]
    for table in (joint_bias_from_cells(cells), joint_bias(accepted)):
        got = table.set_index("judge")
        for judge in (none, lengthless):
            notes = got.loc[judge, "notes"].split("; ")
            assert not got.loc[judge, "uses_human_verdict"]
            assert pd.isna(got.loc[judge, "human_verdict_logodds"])
            assert got.loc[judge, "n_judgments"] == n_fitted[judge]
            assert [n for n in notes if "human" in n] == [
                f"no human verdict on the {n_fitted[judge]} judgments fitted: no human-verdict term"
            ], judge
        ties = got.loc["judge-t"]
        assert not ties["uses_human_verdict"] and ties["n_judgments"] == 0
        assert ties["notes"] == "all 4 verdicts are ties: nothing decisive to fit"
        assert got.loc[every, "uses_human_verdict"]
        assert pd.notna(got.loc[every, "human_verdict_logodds"])
        assert pd.isna(got.loc[every, "notes"]) or "human" not in got.loc[every, "notes"]
        for judge in judges[3:]:
            assert not got.loc[judge, "uses_human_verdict"]
            assert "term left out" in got.loc[judge, "notes"]
            assert "fitted" not in got.loc[judge, "notes"]


def _hand_rows(judgments: list[tuple[str, str, str, str, str]]) -> pd.DataFrame:
    """int_pairwise_checked rows from (judge, prompt, first, second, verdict), each
    judge's own model its own name, lengths 10 and 20 on every completion."""
    return pd.DataFrame(
        [
            {
                "judge": j, "prompt_id": p, "model_first": a, "model_second": b,
                "run_id": "1", "verdict": v, "p_first": np.nan, "human_verdict": None,
                "perplexity_first": np.nan, "perplexity_second": np.nan,
                "length_first": 10.0, "length_second": 20.0,
                "is_self_first": a == j, "is_self_second": b == j,
                "pair_key": f"{j}|{p}|{min(a, b)}|{max(a, b)}|1", "has_swapped": False,
                "reject_code": None, "kept_as_invalid": False,
            }
            for j, p, a, b, v in judgments
        ]
    )  # fmt: skip


# judge T says only tie (3 verdicts, one on its own model's pair); judge S ties on
# its 2 own pairs and on one pair of others (counting every tie as an own-pair tie
# says 3), and is decisive on 3 pairs of others
TIES_AND_OWN_TIES = [
    ("T", "p1", "T", "O", "tie"), ("T", "p2", "O", "P", "tie"),
    ("T", "p3", "P", "O", "tie"),
    ("S", "p1", "S", "O", "tie"), ("S", "p2", "O", "S", "tie"),
    ("S", "p3", "O", "P", "first"), ("S", "p4", "P", "O", "second"),
    ("S", "p5", "O", "P", "second"), ("S", "p6", "P", "O", "tie"),
]  # fmt: skip


def test_joint_notes_of_a_judge_of_ties_say_so() -> None:
    """pairwise_joint_bias's notes for ties, both routes, on hand-made judgments
    with lengths everywhere: judge T says only tie (3 verdicts, one on its own
    model's pair): its note is "all 3 verdicts are ties", not "no completion
    lengths" nor "no pair with the judge's own model" (both false: its ties have
    lengths and an own pair); judge S is decisive on others' pairs and ties on its
    2 own pairs: "all 2 verdicts on pairs with the judge's own model are ties";
    judge N never sees its own model: the old note, true there; judge L's one own
    pair is decisive but without lengths (left out): the note says so."""
    rows = _hand_rows(
        [
            *TIES_AND_OWN_TIES,
            ("N", "p1", "O", "P", "first"), ("N", "p2", "P", "O", "first"),
            ("L", "p1", "L", "O", "first"), ("L", "p2", "O", "P", "first"),
            ("L", "p3", "P", "O", "second"),
        ]
    )  # fmt: skip
    # judge L's own pair (decisive) has no lengths: left out of the fit
    rows.loc[(rows["judge"] == "L") & (rows["prompt_id"] == "p1"), "length_first"] = np.nan
    cells = aggregates(rows)["int_pairwise_logit_cells"]
    for table in (joint_bias_from_cells(cells), joint_bias(rows)):
        got = table.set_index("judge")["notes"]
        assert got["T"] == "all 3 verdicts are ties: nothing decisive to fit"
        s_notes = got["S"].split("; ")
        assert (
            "all 2 verdicts on pairs with the judge's own model are ties: "
            "no self-preference term" in s_notes
        )
        assert not any("no pair with" in n or "no completion lengths" in n for n in s_notes)
        assert "no pair with the judge's own model: no self-preference term" in got["N"]
        assert (
            "1 decisive judgment with the judge's own model, without lengths: "
            "no self-preference term" in got["L"]
        )


def test_a_null_self_preference_rate_of_own_ties_has_a_note() -> None:
    """pairwise_bias.self_preference_rate is null when every verdict on the
    judge's own pairs is a tie (no decisive one): notes says so with the count,
    both routes, on the opponent row and the pooled row; judge S (hand-made): 2
    own-pair ties, 3 decisive verdicts on others' pairs. A judge with a decisive
    own pair (N2) has the rate and no such note. A judge of ties only (T): its
    pooled row says its verdicts are all ties, not "no completion lengths"."""
    rows = _hand_rows(
        [
            *TIES_AND_OWN_TIES,
            ("N2", "p1", "N2", "O", "first"), ("N2", "p2", "O", "N2", "tie"),
        ]
    )  # fmt: skip
    note = (
        "all 2 verdicts on pairs with the judge's own model are ties: no "
        "self_preference_rate (self_preference_rate_ties_half counts them half)"
    )
    for table in _bias_both_routes(rows, rows):
        got = table.set_index(["judge", "opponent"])
        for opponent in ("O", "all"):
            row = got.loc[("S", opponent)]
            assert row["n_self_judgments"] == 2 and pd.isna(row["self_preference_rate"])
            assert row["self_preference_rate_ties_half"] == 0.5
            assert note in row["notes"].split("; ")
        for opponent in ("O", "all"):
            row = got.loc[("N2", opponent)]
            assert row["self_preference_rate"] == 1.0
            assert pd.isna(row["notes"]) or "self_preference_rate" not in row["notes"]
        # judge T says only tie, on completions with lengths: no length slope, and
        # not for want of lengths
        pooled = got.loc[("T", "all"), "notes"].split("; ")
        assert "all 3 verdicts are ties: no length slope" in pooled
        assert "no completion lengths" not in pooled


def test_decisive_verdicts_without_lengths_beside_ties_with_lengths() -> None:
    """Judge D: 2 decisive verdicts without lengths, 2 ties with lengths (one on its
    own pair): "no completion lengths" would be false; both marts, both routes, say
    "no lengths on its 2 decisive verdicts", and not that its verdicts are all
    ties (they are not). Judge E, no lengths anywhere: "no completion lengths"."""
    rows = _hand_rows(
        [
            ("D", "p1", "D", "O", "tie"), ("D", "p2", "O", "P", "tie"),
            ("D", "p3", "O", "P", "first"), ("D", "p4", "P", "O", "second"),
            ("E", "p1", "E", "O", "first"), ("E", "p2", "O", "P", "second"),
        ]
    )  # fmt: skip
    lengthless = ((rows["judge"] == "D") & rows["prompt_id"].isin(["p3", "p4"])) | (
        rows["judge"] == "E"
    )
    rows.loc[lengthless, "length_first"] = np.nan
    for table in _bias_both_routes(rows, rows):
        got = table.set_index(["judge", "opponent"])["notes"]
        pooled = got[("D", "all")].split("; ")
        assert "no lengths on its 2 decisive verdicts" in pooled
        assert "no completion lengths" not in pooled
        assert not any("verdicts are ties: no length slope" in n for n in pooled), pooled
        assert "no completion lengths" in got[("E", "all")].split("; ")
    cells = aggregates(rows)["int_pairwise_logit_cells"]
    for table in (joint_bias_from_cells(cells), joint_bias(rows)):
        got = table.set_index("judge")["notes"]
        notes = got["D"].split("; ")
        assert "no lengths on its 2 decisive verdicts: no length term" in notes
        assert not any("no completion lengths" in n or "nothing decisive" in n for n in notes)
        assert "no completion lengths: no length term" in got["E"].split("; ")


def test_a_judge_of_invalid_verdicts_only_gets_no_all_ties_note() -> None:
    """Judge V gives only invalid verdicts (kept as invalid): no valid judgment, so
    the mart (int_pairwise_logit_cells: valid judgments only) has no row for it; the
    rows route has none either, not "all 0 verdicts are ties" (review22d N1). Judge
    T of ties only keeps its note."""
    rows = _hand_rows(
        [*TIES_AND_OWN_TIES, ("V", "p1", "V", "O", "invalid"), ("V", "p2", "O", "P", "invalid")]
    )
    rows.loc[rows["judge"] == "V", "kept_as_invalid"] = True
    cells = aggregates(rows)["int_pairwise_logit_cells"]
    for table in (joint_bias_from_cells(cells), joint_bias(rows)):
        got = table.set_index("judge")["notes"]
        assert "V" not in got.index
        assert not got.str.contains("all 0 verdicts").any()
        assert got["T"] == "all 3 verdicts are ties: nothing decisive to fit"


def test_notes_of_one_verdict_are_singular() -> None:
    """Notes counting one verdict agree with it (review22d N3): judge U's only
    verdict is a tie on its own pair: "the 1 verdict is a tie" in pairwise_joint_bias
    and on pairwise_bias's pooled row, "the 1 verdict on pairs with the judge's own
    model is a tie ... counts it half" on its rows; judge W's one decisive verdict
    lacks lengths beside a tie with them: "no lengths on its 1 decisive verdict"."""
    rows = _hand_rows(
        [
            ("U", "p1", "U", "O", "tie"),
            ("W", "p1", "O", "P", "first"), ("W", "p2", "P", "O", "tie"),
        ]
    )  # fmt: skip
    rows.loc[(rows["judge"] == "W") & (rows["prompt_id"] == "p1"), "length_first"] = np.nan
    own = (
        "the 1 verdict on pairs with the judge's own model is a tie: no "
        "self_preference_rate (self_preference_rate_ties_half counts it half)"
    )
    for table in _bias_both_routes(rows, rows):
        got = table.set_index(["judge", "opponent"])["notes"]
        pooled = got[("U", "all")].split("; ")
        assert "the 1 verdict is a tie: no length slope" in pooled
        assert own in pooled and own in got[("U", "O")].split("; ")
        assert "no lengths on its 1 decisive verdict" in got[("W", "all")].split("; ")
    cells = aggregates(rows)["int_pairwise_logit_cells"]
    for table in (joint_bias_from_cells(cells), joint_bias(rows)):
        got = table.set_index("judge")["notes"]
        assert got["U"] == "the 1 verdict is a tie: nothing decisive to fit"
        assert "no lengths on its 1 decisive verdict: no length term" in got["W"].split("; ")
        human = "no human verdict on the 1 judgment fitted: no human-verdict term"
        assert human in got["W"].split("; ")
