"""pairwise_bias and pairwise_perplexity_bins against independent references."""

from __future__ import annotations

import json
import math
import runpy
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from judge_bias.bench.pairwise import simulate_pairwise_rows, time_pairwise, write_pairwise_data
from judge_bias.pairwise.fits import length_slopes
from judge_bias.pairwise.reference.human import WITH_HUMAN_COLUMNS, pairwise_bias_with_human
from judge_bias.pairwise.reference.rates import (
    PAIRWISE_BIAS_COLUMNS,
    PERPLEXITY_BIN_COLUMNS,
    length_feature,
    pairwise_bias,
    perplexity_bins,
    prepare,
)
from judge_bias.stats.intervals import clustered_rates, wilson
from judge_bias.warehouse.build import PROJECT_DIR
from tests.sql_models import model_relation

Z = 1.959963984540054


def expit(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def textbook_wilson(k: float, n: float) -> tuple[float, float]:
    """Wilson (1927) score interval, typed from the textbook formula."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (1852, 1960), (7, 9), (50, 100)])
def test_wilson_equals_the_textbook_formula(k: int, n: int) -> None:
    low, high = wilson(np.array([k / n]), np.array([float(n)]))
    ref = textbook_wilson(k, n)
    assert low[0] == pytest.approx(ref[0], abs=1e-12)
    assert high[0] == pytest.approx(ref[1], abs=1e-12)


def test_clustered_rates_are_wilson_with_one_unit_per_prompt() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(300) < 0.3).astype(float)
    sums = pd.DataFrame({"g": "a", "prompt": np.arange(300), "y": y, "d": 1.0})
    got = clustered_rates(sums, ["g"], "prompt").loc["a"]
    low, high = proportion_confint(int(y.sum()), 300, method="wilson")
    assert got["n_eff"] == pytest.approx(300, abs=1e-9)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((low, high), abs=1e-12)


def test_clustered_interval_covers_under_prompt_clustering() -> None:
    """Units share a prompt effect: plain Wilson under-covers, the design-effect
    Wilson keeps about 95% (400 replications; binomial sd of the coverage 0.011)."""
    rng = np.random.default_rng(11)
    n_prompts, per_prompt, reps = 80, 6, 400
    truth = 0.35
    # prompt probabilities from a Beta with mean 0.35 and intra-class correlation 0.2
    a, b = truth * 4.0, (1 - truth) * 4.0
    covered = naive_covered = 0
    for _ in range(reps):
        p_prompt = rng.beta(a, b, size=n_prompts)
        y = (rng.random((n_prompts, per_prompt)) < p_prompt[:, None]).astype(float)
        sums = pd.DataFrame(
            {"g": "a", "prompt": np.arange(n_prompts), "y": y.sum(axis=1), "d": per_prompt}
        )
        got = clustered_rates(sums, ["g"], "prompt").loc["a"]
        covered += got["ci_low"] <= truth <= got["ci_high"]
        low, high = proportion_confint(y.sum(), y.size, method="wilson")
        naive_covered += low <= truth <= high
    assert 0.92 <= covered / reps <= 0.98
    assert naive_covered / reps < 0.85


def small_rows(seed: int = 0) -> pd.DataFrame:
    """A few hundred judgments with ties, pairs asked in one order only, pairs
    without the judge, p_first and human verdicts (some missing or tied)."""
    rng = np.random.default_rng(seed)
    models = ["m1", "m2", "m3", "m4"]
    judges = ["m1", "m2", "zeta"]
    out = []
    for prompt in range(40):
        lengths = {m: int(rng.integers(10, 200)) for m in models}
        for judge in judges:
            for _ in range(2):
                a, b = rng.choice(models, size=2, replace=False)
                orders = [(a, b), (b, a)] if rng.random() < 0.8 else [(a, b)]
                human = rng.choice(["first", "second", "tie", None], p=[0.4, 0.4, 0.1, 0.1])
                for k, (first, second) in enumerate(orders):
                    h = human
                    if k == 1 and human in ("first", "second"):
                        h = "second" if human == "first" else "first"
                    out.append(
                        {
                            "judge": judge,
                            "prompt_id": f"p{prompt}",
                            "model_first": first,
                            "model_second": second,
                            "run_id": "1",
                            "verdict": rng.choice(["first", "second", "tie"], p=[0.5, 0.4, 0.1]),
                            "p_first": float(rng.random()) if rng.random() < 0.7 else np.nan,
                            "human_verdict": h,
                            "length_first": float(lengths[first]),
                            "length_second": float(lengths[second]),
                            "is_self_first": judge == first,
                            "is_self_second": judge == second,
                            "pair_key": f"{judge}|p{prompt}|{min(a, b)}|{max(a, b)}|1",
                            "has_swapped": len(orders) == 2,
                        }
                    )
    rows = pd.DataFrame(out)
    return rows.drop_duplicates(["judge", "prompt_id", "model_first", "model_second"])


def loop_reference(rows: pd.DataFrame) -> dict[tuple[str, str], dict[str, float]]:
    """Every count and rate of pairwise_bias by plain loops over the rows."""
    records = rows.to_dict("records")
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        groups[(r["judge"], "all")].append(r)
        if r["is_self_first"]:
            groups[(r["judge"], r["model_second"])].append(r)
        elif r["is_self_second"]:
            groups[(r["judge"], r["model_first"])].append(r)
    ref = {}
    for key, rs in groups.items():
        by_pair: dict[str, list[dict]] = defaultdict(list)
        for r in rs:
            by_pair[r["pair_key"]].append(r)
        consistent = inconsistent_pairs = 0
        inconsistent_keys = set()
        for pk, pr in by_pair.items():
            if len(pr) != 2:
                continue
            picks = []
            for r in pr:
                if r["verdict"] == "first":
                    picks.append(r["model_first"])
                elif r["verdict"] == "second":
                    picks.append(r["model_second"])
                else:
                    picks.append("TIE")
            if picks[0] == picks[1]:
                consistent += 1
            else:
                inconsistent_pairs += 1
                inconsistent_keys.add(pk)
        n_swapped = consistent + inconsistent_pairs
        decisive = [r for r in rs if r["verdict"] != "tie"]
        first = sum(r["verdict"] == "first" for r in decisive)
        inc = [r for r in decisive if r["pair_key"] in inconsistent_keys]
        own = [r for r in decisive if r["is_self_first"] or r["is_self_second"]]
        own_all = [r for r in rs if r["is_self_first"] or r["is_self_second"]]
        own_ties = sum(r["verdict"] == "tie" for r in own_all)

        def picked_own(r: dict) -> bool:
            return (r["is_self_first"] and r["verdict"] == "first") or (
                r["is_self_second"] and r["verdict"] == "second"
            )

        probs = []
        for r in rs:
            if (r["is_self_first"] or r["is_self_second"]) and not np.isnan(r["p_first"]):
                probs.append(r["p_first"] if r["is_self_first"] else 1 - r["p_first"])
        cells = {"oo": 0, "ox": 0, "xo": 0, "xx": 0}
        for r in own:
            if r["human_verdict"] not in ("first", "second"):
                continue
            human_own = (r["human_verdict"] == "first") == bool(r["is_self_first"])
            cells[("o" if human_own else "x") + ("o" if picked_own(r) else "x")] += 1
        ref[key] = {
            "n_judgments": len(rs),
            "n_pairs": len(by_pair),
            "n_ties": sum(r["verdict"] == "tie" for r in rs),
            "n_swapped_pairs": n_swapped,
            "n_inconsistent_pairs": inconsistent_pairs,
            "position_consistency": consistent / n_swapped if n_swapped else np.nan,
            "first_slot_rate": first / len(decisive) if decisive else np.nan,
            "first_slot_rate_inconsistent": (
                sum(r["verdict"] == "first" for r in inc) / len(inc) if inc else np.nan
            ),
            "self_preference_rate": sum(map(picked_own, own)) / len(own) if own else np.nan,
            "self_preference_prob": sum(probs) / len(probs) if probs else np.nan,
            "n_self_preference_ties": own_ties,
            "self_preference_rate_ties_half": (
                (sum(map(picked_own, own)) + own_ties / 2) / len(own_all) if own_all else np.nan
            ),
            "eo_human_own_judge_own": cells["oo"],
            "eo_human_own_judge_other": cells["ox"],
            "eo_human_other_judge_own": cells["xo"],
            "eo_human_other_judge_other": cells["xx"],
            "eo_bias": (
                cells["oo"] / (cells["oo"] + cells["ox"])
                - cells["xx"] / (cells["xo"] + cells["xx"])
                if (cells["oo"] + cells["ox"]) and (cells["xo"] + cells["xx"])
                else np.nan
            ),
        }
    return ref


def test_counts_and_rates_equal_a_loop_over_the_rows() -> None:
    rows = small_rows()
    got = pairwise_bias(rows).set_index(["judge", "opponent"])
    ref = loop_reference(rows)
    assert set(got.index) == set(ref)
    for key, expected in ref.items():
        for col, value in expected.items():
            actual = got.loc[key, col]
            if isinstance(value, float) and np.isnan(value):
                assert pd.isna(actual), (key, col)
            else:
                assert actual == pytest.approx(value, abs=1e-12), (key, col)
    # intervals bracket the rates
    for rate in (
        "position_consistency",
        "first_slot_rate",
        "self_preference_rate",
        "self_preference_rate_ties_half",
        "eo_bias",
    ):
        ok = got[rate].notna()
        assert (got.loc[ok, f"{rate}_ci_low"] <= got.loc[ok, rate] + 1e-12).all()
        assert (got.loc[ok, f"{rate}_ci_high"] >= got.loc[ok, rate] - 1e-12).all()
    assert list(pairwise_bias(rows).columns) == list(PAIRWISE_BIAS_COLUMNS)


def test_eo_bias_reproduces_the_papers_gpt4_example() -> None:
    """Figure 2 of the equal-opportunity paper: 1852 / (108 + 1852) = 0.945 and
    118 / (160 + 118) = 0.425, bias 0.520. One judgment per prompt, the own
    completion alternately first and second."""
    cells = [
        ("own", "own", 1852),
        ("own", "other", 108),
        ("other", "own", 160),
        ("other", "other", 118),
    ]
    out = []
    for human, judge, count in cells:
        for _ in range(count):
            i = len(out)
            own_first = i % 2 == 0
            own_slot, other_slot = ("first", "second") if own_first else ("second", "first")
            out.append(
                {
                    "judge": "gpt-4", "prompt_id": f"q{i}", "run_id": "1",
                    "model_first": "gpt-4" if own_first else "vicuna-13b",
                    "model_second": "vicuna-13b" if own_first else "gpt-4",
                    "verdict": own_slot if judge == "own" else other_slot,
                    "human_verdict": own_slot if human == "own" else other_slot,
                    "is_self_first": own_first, "is_self_second": not own_first,
                    "pair_key": f"q{i}",
                }
            )  # fmt: skip
    got = pairwise_bias(pd.DataFrame(out)).set_index("opponent").loc["all"]
    assert got["eo_human_own_judge_own"] == 1852 and got["eo_human_own_judge_other"] == 108
    assert got["eo_human_other_judge_own"] == 160 and got["eo_human_other_judge_other"] == 118
    # the paper rounds loosely (118 / 278 = 0.4245 is printed 0.425)
    assert got["eo_recall_own"] == pytest.approx(0.945, abs=1e-3)
    assert got["eo_recall_other"] == pytest.approx(0.425, abs=1e-3)
    assert got["eo_bias"] == pytest.approx(0.520, abs=5e-4)
    assert got["eo_bias"] == pytest.approx(1852 / 1960 - 118 / 278, abs=1e-12)
    # independent units: Newcombe's interval as statsmodels computes it
    low, high = confint_proportions_2indep(1852, 1960, 118, 278, method="newcomb", compare="diff")
    assert (got["eo_bias_ci_low"], got["eo_bias_ci_high"]) == pytest.approx((low, high), abs=1e-9)


def test_length_slope_equals_statsmodels_logit_on_the_rows() -> None:
    rows = simulate_pairwise_rows(6000, seed=4, quality_weight=0.5, n_prompts=400)
    got = pairwise_bias(rows.drop(columns="x_true")).set_index(["judge", "opponent"])
    # the feature, recomputed: tanh of the difference over the pair's mean length
    x = np.array(
        [
            math.tanh((r.length_first - r.length_second) / ((r.length_first + r.length_second) / 2))
            for r in rows.itertuples()
        ]
    )
    for judge in rows["judge"].unique():
        sel = (rows["judge"] == judge).to_numpy() & (rows["verdict"] != "tie").to_numpy()
        y = (rows["verdict"].to_numpy()[sel] == "first").astype(float)
        groups = pd.factorize(rows["prompt_id"].to_numpy()[sel])[0]
        fit = sm.Logit(y, sm.add_constant(x[sel])).fit(
            disp=0, cov_type="cluster", cov_kwds={"groups": groups}
        )
        row = got.loc[(judge, "all")]
        low, high = fit.conf_int()[1]
        assert row["length_slope"] == pytest.approx(fit.params[1], abs=1e-6)
        assert row["length_slope_ci_low"] == pytest.approx(low, abs=1e-6)
        assert row["length_slope_ci_high"] == pytest.approx(high, abs=1e-6)
        assert row["n_length_judgments"] == sel.sum()


def test_planted_position_length_and_self_preference_are_recovered() -> None:
    """Quality plays no part, so the truths are closed forms of the planted logits.
    One fixed seed: with a dozen 95% intervals, some seeds miss one by chance."""
    rows = simulate_pairwise_rows(
        80_000,
        seed=1,
        position={"judge-a": 1.0},
        length_slope={"judge-b": 1.5},
        self_logit={"judge-c": 1.0},
        quality_weight=0.0,
        n_prompts=4000,
    )
    got = pairwise_bias(rows.drop(columns="x_true")).set_index(["judge", "opponent"])

    def inside(judge: str, col: str, truth: float, opponent: str = "all") -> None:
        row = got.loc[(judge, opponent)]
        assert row[f"{col}_ci_low"] <= truth <= row[f"{col}_ci_high"], (judge, col, row[col])

    pi = expit(1.0)
    inside("judge-a", "first_slot_rate", pi)
    inside("judge-a", "position_consistency", 2 * pi * (1 - pi))  # same pick = first then second
    inside("judge-a", "first_slot_rate_inconsistent", pi**2 / (pi**2 + (1 - pi) ** 2))
    inside("judge-d", "first_slot_rate", 0.5)
    inside("judge-b", "length_slope", 1.5)
    inside("judge-a", "length_slope", 0.0)
    inside("judge-c", "self_preference_rate", pi)
    inside("judge-c", "self_preference_rate", pi, opponent="writer-x")
    inside("judge-c", "self_preference_prob", pi)
    inside("judge-d", "self_preference_rate", 0.5)
    # the judge ignores quality, humans follow it: recalls pi and 1 - pi
    inside("judge-c", "eo_bias", 2 * pi - 1)
    inside("judge-d", "eo_bias", 0.0)
    assert got.loc[("judge-a", "all"), "first_slot_rate_ci_low"] > 0.6
    assert got.loc[("judge-b", "all"), "length_slope_ci_low"] > 1.0


def test_perplexity_bins_equal_a_count_per_bin() -> None:
    rows = simulate_pairwise_rows(4000, seed=6, n_prompts=300).drop(columns="x_true")
    rows.loc[rows.index[::7], "verdict"] = "tie"
    got = perplexity_bins(rows, n_bins=5)
    assert list(got.columns) == list(PERPLEXITY_BIN_COLUMNS)
    for judge, part in got.groupby("judge"):
        mine = rows[rows["judge"] == judge]
        d = np.log(mine["perplexity_first"].to_numpy()) - np.log(mine["perplexity_second"])
        assert list(part["bin"]) == [1, 2, 3, 4, 5]
        total = 0
        for b in part.itertuples():
            last = b.bin == part["bin"].max()
            in_bin = (d >= b.log_ppl_diff_low) & ((d < b.log_ppl_diff_high) | last)
            judged = [v for v, keep in zip(mine["verdict"], in_bin, strict=True) if keep]
            decisive = [v for v in judged if v != "tie"]
            humans = [v for v, keep in zip(mine["human_verdict"], in_bin, strict=True) if keep]
            assert b.n_judgments == len(decisive)
            assert b.judge_first_rate == pytest.approx(decisive.count("first") / len(decisive))
            assert b.human_first_rate == pytest.approx(humans.count("first") / len(humans))
            total += len(decisive)
        assert total == (mine["verdict"] != "tie").sum()


def test_empty_input_gives_empty_marts_with_every_column() -> None:
    empty = small_rows().iloc[:0]
    bias = pairwise_bias(empty)
    bins = perplexity_bins(empty)
    assert bias.empty and list(bias.columns) == list(PAIRWISE_BIAS_COLUMNS)
    assert bins.empty and list(bins.columns) == list(PERPLEXITY_BIN_COLUMNS)


class FakeDbt:
    """The part of dbt's Python-model API the marts use: ref() returns a DuckDB
    relation of the given frame or of the SQL model computed from them,
    config.get() the given config (dbt vars)."""

    def __init__(self, tables: dict[str, pd.DataFrame], config: dict | None = None) -> None:
        self.con = duckdb.connect()
        self.tables = tables
        self.config = SimpleNamespace(get=(config or {}).get)

    def ref(self, name: str) -> duckdb.DuckDBPyRelation:
        # a given frame, else the project's SQL model of that name run on them
        return model_relation(self.con, name, self.tables)


def run_model(path: str, tables: dict[str, pd.DataFrame], config: dict | None = None):
    module = runpy.run_path(str(PROJECT_DIR / path))
    return module["model"](FakeDbt(tables, config), None)


def test_dbt_models_drop_rejected_rows_and_call_the_functions() -> None:
    rows = simulate_pairwise_rows(2000, seed=8, n_prompts=150).drop(columns="x_true")
    checked = rows.assign(reject_code=None, reject_reason=None, kept_as_invalid=False)
    bad = checked.head(50).assign(
        reject_code="invalid_value", reject_reason="bad verdict", verdict="first"
    )
    # rejected for an unparseable verdict alone: kept by pairwise_bias as `invalid`
    unparsed = checked.tail(7).assign(
        reject_code="invalid_value", reject_reason="verdict 'x'", verdict=None,
        kept_as_invalid=True, prompt_id="unparsed",
    )  # fmt: skip
    tables = {"int_pairwise_checked": pd.concat([checked, bad, unparsed], ignore_index=True)}
    got = run_model("models/intermediate/pairwise/int_pairwise_bias_results.py", tables)
    expected = pd.concat([rows, unparsed.assign(verdict="invalid")[rows.columns]])
    pd.testing.assert_frame_equal(got, pairwise_bias_with_human(expected.reset_index(drop=True)))
    assert got.loc[got["opponent"] == "all", "n_invalid"].sum() == 7
    got_bins = run_model(
        "models/intermediate/pairwise/int_pairwise_perplexity_bins_results.py", tables
    )
    pd.testing.assert_frame_equal(got_bins, perplexity_bins(rows))


def test_over_the_memory_budget_each_judge_gets_a_note_not_a_kill() -> None:
    rows = simulate_pairwise_rows(2000, seed=8, n_prompts=150).drop(columns="x_true")
    tables = {
        "int_pairwise_checked": rows.assign(
            reject_code=None, reject_reason=None, kept_as_invalid=False
        )
    }
    # the logit cells of 2,000 judgments (about one per judgment) cannot fit in 100 kB
    tiny = {"memory_budget": "100kB"}
    got = run_model("models/intermediate/pairwise/int_pairwise_bias_results.py", tables, tiny)
    assert sorted(got["judge"]) == sorted(rows["judge"].unique())
    assert (got["opponent"] == "all").all() and got["first_slot_rate"].isna().all()
    assert got["notes"].str.contains("pairwise logit cells").all()
    assert got["notes"].str.contains("memory_budget").all()
    assert list(got.columns) == list(WITH_HUMAN_COLUMNS)
    bins = run_model(
        "models/intermediate/pairwise/int_pairwise_perplexity_bins_results.py", tables, tiny
    )
    assert bins.empty and list(bins.columns) == list(PERPLEXITY_BIN_COLUMNS)
    # the same rows fit in 10 MB
    roomy = run_model(
        "models/intermediate/pairwise/int_pairwise_bias_results.py",
        tables,
        {"memory_budget": "10MB"},
    )
    pd.testing.assert_frame_equal(roomy, pairwise_bias_with_human(rows))


def test_bench_writes_a_data_directory_and_times(tmp_path: Path) -> None:
    out = write_pairwise_data(tmp_path / "bench", n_rows=2000)
    written = pd.read_parquet(out / "pairwise_judgments.parquet")
    assert len(written) == 2000
    assert {"judge", "prompt_id", "model_first", "model_second", "verdict"} <= set(written)
    completions = pd.read_csv(out / "completions.csv")
    assert not completions.duplicated(["prompt_id", "model"]).any()
    timing = time_pairwise(4000)
    assert timing["rows"] == 4000 and timing["pairwise_bias_s"] > 0


XSUM = PROJECT_DIR.parent / "shared" / "data" / "self_recognition_xsum"


@pytest.mark.shared
@pytest.mark.skipif(not XSUM.exists(), reason="../shared/data is not present")
@pytest.mark.parametrize("judge", ["gpt4", "gpt35", "llama"])
def test_xsum_self_recognition_rates_equal_a_count_from_the_json(judge: str) -> None:
    """Each record -> two judgments (own summary first, then second) as the
    importer writes them; the rates must equal counts taken from the JSON."""
    records = json.loads((XSUM / f"{judge}_results.json").read_text())
    out = []
    for r in records:
        key = f"{judge}|{r['key']}|{r['model']}"
        base = {"judge": judge, "prompt_id": r["key"], "run_id": "1", "pair_key": key}
        out.append(
            base | {"model_first": judge, "model_second": r["model"],
                    "verdict": "first" if r["forward_comparison"] == "1" else "second",
                    "p_first": r["self_preference"], "is_self_first": True,
                    "is_self_second": False}
        )  # fmt: skip
        out.append(
            base | {"model_first": r["model"], "model_second": judge,
                    "verdict": "first" if r["backward_comparison"] == "1" else "second",
                    "p_first": 1 - r["self_preference"], "is_self_first": False,
                    "is_self_second": True}
        )  # fmt: skip
    got = pairwise_bias(pd.DataFrame(out)).set_index("opponent")
    for opponent in ["all", *sorted({r["model"] for r in records})]:
        rs = [r for r in records if opponent in ("all", r["model"])]
        fwd_own = sum(r["forward_comparison"] == "1" for r in rs)  # own summary shown first
        bwd_own = sum(r["backward_comparison"] == "2" for r in rs)
        both_same = sum(
            (r["forward_comparison"] == "1") == (r["backward_comparison"] == "2") for r in rs
        )
        row = got.loc[opponent]
        assert row["n_pairs"] == len(rs) and row["n_swapped_pairs"] == len(rs)
        assert row["position_consistency"] == pytest.approx(both_same / len(rs), abs=1e-12)
        first = fwd_own + (len(rs) - bwd_own)  # backward "1" = the other summary, first
        assert row["first_slot_rate"] == pytest.approx(first / (2 * len(rs)), abs=1e-12)
        assert row["self_preference_rate"] == pytest.approx(
            (fwd_own + bwd_own) / (2 * len(rs)), abs=1e-12
        )
        assert row["self_preference_prob"] == pytest.approx(
            np.mean([r["self_preference"] for r in rs]), abs=1e-12
        )


def test_grouped_length_fit_equals_logit_on_the_rows() -> None:
    """x with ties (rounded) takes the compressed GLM path; same fit as the rows."""
    rows = simulate_pairwise_rows(6000, seed=12, n_prompts=400).drop(columns="x_true")
    w = prepare(rows)
    x = np.round(length_feature(rows, w), 1)
    got = length_slopes(w, x).set_index("judge")
    for code in range(len(w.attrs["judges"])):
        sel = (w["judge"].to_numpy() == code) & w["decisive"].to_numpy()
        assert len(np.unique(x[sel])) * 2 <= sel.sum()  # the grouped path
        fit = sm.Logit(w["first"].to_numpy()[sel].astype(float), sm.add_constant(x[sel])).fit(
            disp=0, cov_type="cluster", cov_kwds={"groups": w["prompt"].to_numpy()[sel]}
        )
        assert got.loc[code, "length_slope"] == pytest.approx(fit.params[1], abs=1e-6)
        assert got.loc[code, "length_slope_ci_low"] == pytest.approx(fit.conf_int()[1][0], abs=1e-6)
