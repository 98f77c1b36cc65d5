"""The agreement marts read from DuckDB as integer codes and per-prompt sums (issue 34):
their rows must equal the rating-level computation, with the same bootstrap draws
assigned to the same prompts (the string order of the prompt ids), whatever order
DuckDB's collation gives and however many ratings a row stands for."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.agreement.counterfactual import counterfactual_from_prompt_sums
from judge_bias.agreement.marts import (
    agreement_counterfactual,
    agreement_judge_human,
    self_vs_peer_tests,
)
from judge_bias.agreement.measures import judge_human_agreement
from judge_bias.agreement.self_vs_peer import self_vs_peer_tests as svp_from_items
from judge_bias.stats.binary_agreement import BINARY_COLUMNS, agreement_binary_mart
from judge_bias.stats.level_intervals import cluster_bootstrap_counts, cluster_bootstrap_weights
from tests.agreement_reference import binary_agreement


def _ratings(prompts: list, seed: int = 5, n: int = 400) -> pd.DataFrame:
    """Distinct score pairs with counts: two judges (one with two dimensions), some
    ratings unlabelled (human null)."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 5, n) / 4
    human[rng.random(n) < 0.2] = np.nan
    judge = np.where(rng.random(n) < 0.7, human, rng.integers(0, 5, n) / 4)
    judge = np.where(np.isnan(judge), rng.integers(0, 5, n) / 4, judge)
    names = np.array(["b", "A"])[rng.integers(0, 2, n)]
    dims = np.where(names == "A", "d1", np.array(["d1", "D2"])[rng.integers(0, 2, n)])
    return pd.DataFrame(
        {
            "judge": names,
            "dimension": dims,
            "prompt_id": np.array(prompts, dtype=object)[rng.integers(0, len(prompts), n)],
            "judge_score_norm": judge,
            "human_score_norm": human,
            "n_rows": rng.integers(1, 4, n),
        }
    )


def _nocase(frame: pd.DataFrame) -> duckdb.DuckDBPyRelation:
    """``frame`` as a relation of a connection whose strings sort without case ("A" <
    "b" < "B"): its order is not Python's."""
    con = duckdb.connect(config={"default_collation": "nocase"})
    return con.from_df(frame)


def _assert_rows_equal(got: pd.Series, want: dict) -> None:
    for key, value in want.items():
        if isinstance(value, float) or value is None and BINARY_COLUMNS.get(key) == "float64":
            assert (value is None and pd.isna(got[key])) or got[key] == pytest.approx(
                value, rel=1e-12, abs=1e-15
            ), key
        else:
            assert got[key] == value, key


CASES = {
    # integer ids: DuckDB orders 2 < 10, the bootstrap's clusters are "10" < "2"
    "integer prompt ids": (list(range(1, 25)), "frame", 5),
    # strings whose case-blind order (DuckDB here) is not Python's
    "case-blind collation": ([f"{c}{i}" for c in "aB" for i in range(12)], "nocase", 5),
    "one prompt": (["p"], "frame", 5),
    # judge A: every human label a pass (no human fail); judge b: no label at all
    "constant labels and no labels": (list(range(30)), "frame", 9),
}


@pytest.mark.parametrize("case", CASES)
def test_binary_mart_equals_the_rating_level_statistics(case: str) -> None:
    """Each row of agreement_binary_mart (per-prompt sums from DuckDB) equals
    binary_agreement on that group's ratings, one row per rating: counts exactly,
    statistics, bootstrap intervals, notes and nulls to 1e-12."""
    prompts, route, seed = CASES[case]
    frame = _ratings(prompts, seed=seed)
    if case == "constant labels and no labels":
        frame["human_score_norm"] = np.where(frame["judge"] == "A", 1.0, np.nan)
    mart = agreement_binary_mart(frame if route == "frame" else _nocase(frame), n_boot=300)
    expected = [("A", "d1"), ("b", "D2"), ("b", "all"), ("b", "d1")]  # pandas' sorted groups
    assert list(zip(mart["judge"], mart["dimension"], strict=True)) == expected
    for _, row in mart.iterrows():
        sub = frame[frame["judge"] == row["judge"]]
        if row["dimension"] != "all":
            sub = sub[sub["dimension"] == row["dimension"]]
        rows = sub.loc[sub.index.repeat(sub["n_rows"])]
        alone = binary_agreement(
            rows["judge_score_norm"].to_numpy(),
            rows["human_score_norm"].to_numpy(),
            rows["prompt_id"].to_numpy(dtype=object),
            n_boot=300,
        )
        _assert_rows_equal(row, alone)
    if case == "one prompt":
        assert mart["qwk_ci_low"].isna().all() and mart["notes"].str.contains("2 prompts").all()
    elif case == "constant labels and no labels":
        assert mart.loc[mart["judge"] == "A", "notes"].str.contains("no human fail").all()
        assert mart.loc[mart["judge"] == "b", "notes"].str.contains("no human labels").all()
    else:
        assert mart["qwk_ci_low"].notna().all()


@pytest.mark.parametrize(("g", "n_boot"), [(7, 5), (50, 33), (1000, 16)])
def test_bootstrap_weights_are_the_counts_drawn_in_chunks(g: int, n_boot: int) -> None:
    np.testing.assert_array_equal(
        cluster_bootstrap_weights(g, n_boot, 11), cluster_bootstrap_counts(g, n_boot, 11)
    )


def test_judge_human_and_counterfactual_from_codes_equal_the_frames() -> None:
    """agreement_judge_human and agreement_counterfactual read a DuckDB relation as
    integer codes: equal to the functions on the pandas frame (the prompt-bootstrap
    of the counterfactual follows the prompts' sorted order: a case-blind
    collation must not change it)."""
    frame = _ratings([f"{c}{i}" for c in "aB" for i in range(15)], seed=2, n=900)
    pairs = (
        frame.dropna(subset=["human_score_norm"])
        .groupby(["judge", "dimension", "prompt_id", "judge_score_norm", "human_score_norm"])
        ["n_rows"].sum().reset_index()
    )  # fmt: skip
    got = agreement_judge_human(lambda name: _nocase(pairs), {}.get)
    pd.testing.assert_frame_equal(got, judge_human_agreement(pairs), rtol=1e-12)
    sums = (
        pairs.assign(
            a=pairs["judge_score_norm"] * pairs["n_rows"],
            b=pairs["human_score_norm"] * pairs["n_rows"],
            aa=pairs["judge_score_norm"] ** 2 * pairs["n_rows"],
            bb=pairs["human_score_norm"] ** 2 * pairs["n_rows"],
            ab=pairs["judge_score_norm"] * pairs["human_score_norm"] * pairs["n_rows"],
        )
        .groupby(["judge", "dimension", "prompt_id"])[["n_rows", "a", "b", "aa", "bb", "ab"]]
        .sum()
        .reset_index()
        .rename(
            columns={
                "n_rows": "n",
                "a": "sum_a",
                "b": "sum_b",
                "aa": "sum_aa",
                "bb": "sum_bb",
                "ab": "sum_ab",
            }
        )  # fmt: skip
    )
    got = agreement_counterfactual(lambda name: _nocase(sums), {}.get)
    pd.testing.assert_frame_equal(got, counterfactual_from_prompt_sums(sums), rtol=1e-12)


def test_self_vs_peer_from_codes_equals_the_frame() -> None:
    """self_vs_peer_tests reads the items as codes (categoricals): equal to the
    function on the pandas frame, the frame-difference rows included."""
    rng = np.random.default_rng(4)
    n = 240
    items = pd.DataFrame(
        {
            "judge": np.array(["b", "A"])[rng.integers(0, 2, n)],
            "framing": np.array(["positive", "inverted"])[rng.integers(0, 2, n)],
            "prompt_id": np.array([f"{c}{i}" for c in "aB" for i in range(10)])[
                rng.integers(0, 20, n)
            ],
            "dimension": np.array(["d1", "D2"])[rng.integers(0, 2, n)],
            "s": rng.random(n),
            "r": rng.random(n),
            "g": rng.random(n),
        }
    ).drop_duplicates(["judge", "framing", "prompt_id", "dimension"])
    got = self_vs_peer_tests(lambda name: _nocase(items), {}.get)
    want = svp_from_items(items=items)
    assert (got["framing"] == "inverted - positive").sum() == 2
    pd.testing.assert_frame_equal(got, want, rtol=1e-12)
