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
from judge_bias.agreement.judge_human import judge_human_agreement
from judge_bias.agreement.judge_human_sums import judge_human_from_sums
from judge_bias.agreement.marts import (
    agreement_counterfactual,
    agreement_judge_human,
    self_vs_peer_tests,
)
from judge_bias.agreement.self_vs_peer import self_vs_peer_tests as svp_from_items
from judge_bias.stats.binary_agreement import BINARY_COLUMNS, agreement_binary_mart
from judge_bias.stats.binary_cells import bootstrap_products, labelled_sums
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
    # judge b rates none of the lowest prompt codes and, in d1, skips some in the
    # middle: its pooled "all" cells count over a code range with gaps (review17a: a
    # mutation reading the first codes of the range instead of the present ones
    # passed every other case)
    "a judge without the lowest prompts": ([f"p{i:02d}" for i in range(30)], "nocase", 7),
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
    if case == "a judge without the lowest prompts":
        code = frame["prompt_id"].str[1:].astype(int)
        b = frame["judge"] == "b"
        frame = frame[~(b & ((code < 8) | ((frame["dimension"] == "d1") & code.between(12, 17))))]
        assert frame.loc[frame["judge"] == "b", "prompt_id"].min() == "p08"
        frame = frame.reset_index(drop=True)
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
    keys = ["judge", "dimension", "prompt_id", "judge_score_norm", "human_score_norm"]
    pairs = frame.dropna(subset=["human_score_norm"]).groupby(keys)["n_rows"].sum().reset_index()
    # the mart reads int_agreement_binary_ratings: the pairs and the rows without a
    # human score, which it leaves out
    binary = frame.groupby(keys, dropna=False)["n_rows"].sum().reset_index()
    assert binary["human_score_norm"].isna().any()
    refs = {"int_agreement_binary_ratings": _nocase(binary)}
    got = agreement_judge_human(refs.__getitem__, {}.get)
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


def _edge_pairs() -> pd.DataFrame:
    """Score pairs with counts whose statistics are partly undefined: judge "c" is
    constant (no correlation), "d" has 4 ratings (fewer than 5), "e" rates one prompt
    (no design effect), "f" has continuous human means (many ranks, ties in the
    judge's), "g" has NaN and null scores (left out) and a dimension named "all"."""
    rng = np.random.default_rng(8)
    parts = [_ratings([f"p{i}" for i in range(20)], seed=3, n=300).dropna()]

    def part(judge: str, dims, prompts, x, y, w) -> pd.DataFrame:
        return pd.DataFrame(
            {"judge": judge, "dimension": dims, "prompt_id": prompts,
             "judge_score_norm": x, "human_score_norm": y, "n_rows": w}
        )  # fmt: skip

    parts.append(part("c", "d1", [f"p{i}" for i in range(8)], 0.5, rng.random(8), 2))
    parts.append(part("d", "d1", ["p1", "p2"], [0.0, 1.0], [0.0, 1.0], 2))
    parts.append(part("e", ["d1"] * 6 + ["d2"] * 6, "p1", rng.integers(0, 3, 12) / 2,
                      rng.integers(0, 5, 12) / 4, 1))  # fmt: skip
    n = 200
    dims, prompts = np.array(["x", "y"]), np.array([f"q{i}" for i in range(30)])
    parts.append(part("f", dims[rng.integers(0, 2, n)], prompts[rng.integers(0, 30, n)],
                      rng.integers(0, 5, n) / 4, rng.random(n).round(2),
                      rng.integers(1, 5, n)))  # fmt: skip
    g = part("g", np.array(["all", "z"])[rng.integers(0, 2, 60)],
             np.array([f"r{i}" for i in range(9)])[rng.integers(0, 9, 60)],
             rng.integers(0, 5, 60) / 4, rng.integers(0, 5, 60) / 4, 1)  # fmt: skip
    g.loc[:4, "judge_score_norm"] = np.nan
    g.loc[5:8, "human_score_norm"] = None
    parts.append(g)
    # "h" agrees perfectly (r = 1 on 12 ratings of 3 prompts): no design effect,
    # where rounding once gave 2.23 by one route and 3.51 by the other (review15a)
    h_scores = rng.integers(0, 5, 12) / 4
    parts.append(part("h", "d1", np.repeat(["s1", "s2", "s3"], 4), h_scores, h_scores, 1))
    frame = pd.concat(parts, ignore_index=True)
    keys = ["judge", "dimension", "prompt_id", "judge_score_norm", "human_score_norm"]
    return frame.groupby(keys, dropna=False)["n_rows"].sum().reset_index()


def _with_real_nan(frame: pd.DataFrame) -> duckdb.DuckDBPyRelation:
    """``frame`` as a DuckDB relation whose missing judge scores are IEEE NaN, not
    NULL (DuckDB's from_df reads pandas' NaN as NULL)."""
    con = duckdb.connect()
    return con.from_df(frame).project(
        "* replace (coalesce(judge_score_norm, 'nan'::double) as judge_score_norm)"
    )


@pytest.mark.parametrize("route", ["frame", "nocase", "nan"])
def test_judge_human_from_sums_equals_the_pairs_on_undefined_statistics(route: str) -> None:
    """judge_human_from_sums (DuckDB's contingency tables and per-prompt sums) equals
    judge_human_agreement on the pairs (checked against scipy in test_agreement.py)
    row for row, notes and nulls included: constant scores, fewer than 5 ratings,
    one prompt, many ranks, NaN (as NULL, and as DuckDB's NaN) and null scores, a
    dimension named "all", a perfect agreement (no design effect)."""
    pairs = _edge_pairs()
    relation = {"frame": pairs, "nocase": _nocase(pairs), "nan": _with_real_nan(pairs)}[route]
    if route == "nan":
        assert relation.filter("isnan(judge_score_norm)").count("*").fetchall()[0][0] > 0
    got = judge_human_from_sums(relation)
    want = judge_human_agreement(pairs)
    perfect = got[(got["judge"] == "h") & (got["dimension"] == "d1")].iloc[0]
    assert perfect["pearson"] == pytest.approx(1.0)
    assert np.isnan(perfect["pearson_design_effect"]), perfect
    assert got["notes"].str.contains("judge's scores are constant").any()
    assert got["notes"].str.contains("4 rated pairs").any()
    assert got["notes"].str.contains("one prompt").any()
    pd.testing.assert_frame_equal(got, want, rtol=1e-12)


def test_bootstrap_products_in_chunks_equal_one_product_per_group() -> None:
    """bootstrap_products stacks the groups of one G into a product per chunk: each
    group's slice equals its own product with the same draw, whatever the chunk size,
    and a group with fewer than 2 labelled prompts gets none."""
    rng = np.random.default_rng(6)
    cells = []
    for g in (5, 9, 5, 1, 5, 9):
        c = {k: rng.integers(0, 4, g + 2).astype(float) for k in ("tp", "fp", "ff", "tf")}
        c |= {k: rng.random(g + 2) for k in ("sx", "sy", "sxx", "syy", "sxy")}
        c["nlab"] = np.r_[np.ones(g), np.zeros(2)]
        cells.append(c)
    want = [
        cluster_bootstrap_weights(int(c["nlab"].sum()), 40, 3) @ labelled_sums(c).T
        if c["nlab"].sum() >= 2 else None
        for c in cells
    ]  # fmt: skip
    for chunk in (1, 10 * 5 * 8 * 2, 1 << 20):
        got = bootstrap_products(cells, 40, 3, cluster_bootstrap_weights, chunk_bytes=chunk)
        for g_, w_ in zip(got, want, strict=True):
            if w_ is None:
                assert g_ is None
            else:
                np.testing.assert_allclose(g_, w_, rtol=1e-13)
