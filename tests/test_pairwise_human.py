"""Pairwise bias against human verdicts (issue 14): the clustered logistic fits
equal statsmodels Logit with cov_type='cluster', kappa equals statsmodels'
cohens_kappa, and on LLMBar Natural every new pairwise_bias column equals the
figure recomputed from the JSON files with a parser of its own (not the
importer): LLMBar's `equal` and correct_average, invalid verdicts counted as
inconsistent, accuracy, kappa, P(prefer longer), and the conditional fit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from judge_bias.pairwise.fits import cohens_kappa, logit_clustered
from judge_bias.pairwise.reference.human import (
    joint_bias,
    pairwise_bias_with_human,
)
from tests.conftest import SHARED_DATA, query

LLMBAR = SHARED_DATA / "llmbar_natural"
RESULTS = sorted(LLMBAR.glob("*__result.json"))
needs_llmbar = pytest.mark.skipif(not RESULTS, reason="../shared/data/llmbar_natural is absent")


def _statsmodels(x: np.ndarray, y: np.ndarray, groups: np.ndarray):
    fit = sm.Logit(y, x).fit(disp=0, cov_type="cluster", cov_kwds={"groups": groups})
    return np.asarray(fit.params), np.asarray(fit.cov_params())


@pytest.mark.parametrize("discrete", [True, False])
def test_logit_clustered_equals_statsmodels(discrete: bool) -> None:
    rng = np.random.default_rng(7)
    n, g = 600, 80
    groups = rng.integers(0, g, n)
    h = rng.choice([-1.0, 0.0, 1.0], n)
    x = rng.choice([-0.5, 0.0, 0.5], n) if discrete else rng.normal(size=n)
    u = rng.normal(size=g)[groups]
    eta = 0.3 + 1.2 * h + 0.8 * x + u
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    design = np.column_stack([np.ones(n), h, x])
    params, cov = logit_clustered(design, y, groups)
    ref_params, ref_cov = _statsmodels(design, y, groups)
    assert params == pytest.approx(ref_params, abs=1e-6)
    assert cov == pytest.approx(ref_cov, abs=1e-6)


def test_kappa_equals_statsmodels() -> None:
    rng = np.random.default_rng(3)
    a = rng.choice(["first", "second", "tie"], 300, p=[0.45, 0.45, 0.1])
    b = np.where(rng.random(300) < 0.7, a, rng.choice(["first", "second", "tie"], 300))
    labels = ["first", "second", "tie"]
    table = np.array([[np.sum((a == i) & (b == j)) for j in labels] for i in labels])
    assert cohens_kappa(a, b) == pytest.approx(sm_kappa(table).kappa, abs=1e-12)


def _synthetic(rng: np.random.Generator, n_prompts: int = 150) -> pd.DataFrame:
    """Judge j over pairs (own model 'j' vs 'm1', and 'm1' vs 'm2'), both orders,
    a human verdict per pair, lengths, a few invalid verdicts."""
    rows = []
    for p in range(n_prompts):
        for a, b in (("j", "m1"), ("m1", "m2")):
            la, lb = rng.integers(50, 300, 2)
            human = rng.choice([a, b, "tie"], p=[0.45, 0.45, 0.1])
            for first, second, lf, ls in ((a, b, la, lb), (b, a, lb, la)):
                x = np.tanh((lf - ls) / ((lf + ls) / 2))
                own = 1 if first == "j" else -1 if second == "j" else 0

                hcode = 1 if human == first else -1 if human == second else 0
                eta = 0.4 + 0.7 * own + 1.0 * x + 1.5 * hcode
                u = rng.random()
                verdict = "first" if u < 1 / (1 + np.exp(-eta)) else "second"
                verdict = "tie" if rng.random() < 0.05 else verdict
                verdict = "invalid" if rng.random() < 0.03 else verdict
                rows.append(
                    {
                        "judge": "j", "prompt_id": f"p{p}", "model_first": first,
                        "model_second": second, "run_id": "1", "verdict": verdict,
                        "p_first": None,
                        "human_verdict": "first" if human == first
                        else "second" if human == second else "tie",
                        "length_first": float(lf), "length_second": float(ls),
                        "is_self_first": first == "j", "is_self_second": second == "j",
                        "pair_key": f"{p}-{min(a, b)}-{max(a, b)}",
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_new_columns_equal_independent_computations() -> None:
    df = _synthetic(np.random.default_rng(11))
    got = pairwise_bias_with_human(df).set_index("opponent").loc["all"]
    valid = df[df["verdict"] != "invalid"]
    assert got["n_invalid"] == (df["verdict"] == "invalid").sum()
    assert got["invalid_rate"] == pytest.approx((df["verdict"] == "invalid").mean(), abs=1e-12)
    assert got["accuracy"] == pytest.approx((valid["verdict"] == valid["human_verdict"]).mean())
    assert got["accuracy_with_invalid"] == pytest.approx(
        (df["verdict"] == df["human_verdict"]).mean()
    )
    labels = ["first", "second", "tie"]
    table = pd.crosstab(valid["verdict"], valid["human_verdict"]).reindex(
        index=labels, columns=labels, fill_value=0
    )
    assert got["kappa"] == pytest.approx(sm_kappa(table.to_numpy()).kappa, abs=1e-12)
    # both orders of a pair: equal = same completion chosen (or both tie/invalid)
    chosen = np.where(
        df["verdict"] == "first", df["model_first"],
        np.where(df["verdict"] == "second", df["model_second"], df["verdict"]),
    )  # fmt: skip
    by_pair = pd.Series(chosen).groupby(df["pair_key"].to_numpy()).agg(["first", "last"])
    invalid_pair = (df["verdict"] == "invalid").groupby(df["pair_key"].to_numpy()).any()
    same = by_pair["first"] == by_pair["last"]
    assert got["position_consistency_llmbar"] == pytest.approx(same.mean())
    assert got["position_consistency_invalid_inconsistent"] == pytest.approx(
        (same & ~invalid_pair).mean()
    )
    decisive = valid[valid["verdict"].isin(["first", "second"])]
    differ = decisive[decisive["length_first"] != decisive["length_second"]]
    longer_first = differ["length_first"] > differ["length_second"]
    assert got["p_prefer_longer"] == pytest.approx(
        ((differ["verdict"] == "first") == longer_first).mean()
    )
    hd = df[df["human_verdict"].isin(["first", "second"])]
    hd = hd[hd["length_first"] != hd["length_second"]]
    assert got["human_p_prefer_longer"] == pytest.approx(
        ((hd["human_verdict"] == "first") == (hd["length_first"] > hd["length_second"])).mean()
    )
    # the conditional fit against statsmodels on the rows
    x = np.tanh(
        (decisive["length_first"] - decisive["length_second"])
        / ((decisive["length_first"] + decisive["length_second"]) / 2)
    )
    h = decisive["human_verdict"].map({"first": 1.0, "second": -1.0, "tie": 0.0})
    design = np.column_stack([np.ones(len(decisive)), h, x])
    y = (decisive["verdict"] == "first").to_numpy(float)
    params, cov = _statsmodels(design, y, decisive["prompt_id"].to_numpy())
    assert got["length_slope_given_human"] == pytest.approx(params[2], abs=1e-6)
    half = 1.959963984540054 * np.sqrt(cov[2, 2])
    assert got["length_slope_given_human_ci_low"] == pytest.approx(params[2] - half, abs=1e-6)
    assert got["first_slot_rate_given_human"] == pytest.approx(
        1 / (1 + np.exp(-params[0])), abs=1e-6
    )
    # the joint fit: own indicator, length, position and human verdict together
    joint = joint_bias(df[df["verdict"] != "invalid"]).set_index("judge").loc["j"]
    own = np.where(decisive["is_self_first"], 1.0, np.where(decisive["is_self_second"], -1.0, 0))
    design = np.column_stack([np.ones(len(decisive)), own, x, h])
    params, cov = _statsmodels(design, y, decisive["prompt_id"].to_numpy())
    assert joint["self_preference_logodds"] == pytest.approx(params[1], abs=1e-6)
    assert joint["length_slope"] == pytest.approx(params[2], abs=1e-6)
    assert joint["human_verdict_logodds"] == pytest.approx(params[3], abs=1e-6)
    se = np.sqrt(cov[1, 1])
    assert joint["self_preference_logodds_ci_high"] == pytest.approx(
        params[1] + 1.959963984540054 * se, abs=1e-6
    )
    assert bool(joint["uses_human_verdict"])
    # planted: own 0.7, length 1.0 (ties and invalid verdicts aside)
    assert joint["self_preference_logodds_ci_low"] < 0.7 < joint["self_preference_logodds_ci_high"]


# --- LLMBar Natural, recomputed from the JSON files -----------------------------

TOKEN = re.compile(r"[^\W]+|[^\w\s]")  # the warehouse's \pL\pN_ words and symbols


def llmbar_by_hand(path: Path) -> dict[str, float]:
    """Figures of one LLMBar result file, from the JSON alone."""
    gold = json.loads((LLMBAR / "dataset.json").read_text(encoding="utf-8"))
    items = json.loads(path.read_text(encoding="utf-8"))
    n = len(items)
    equal = strict = correct = parsed_correct = parsed = nones = 0
    rows, gold_longer = [], []
    for index, (item, ref) in enumerate(zip(items, gold, strict=True)):
        w_false = item["results"][-1]["swap = False"]["winner"]
        w_true = item["results"][-1]["swap = True"]["winner"]
        label = str(ref["label"])
        equal += w_false == w_true  # LLMBar's evaluate.py: None == None agrees
        strict += w_false == w_true and w_false is not None
        lengths = {o: len(TOKEN.findall(ref[o])) for o in ("output_1", "output_2")}
        if lengths["output_1"] != lengths["output_2"]:
            gold_longer.append(lengths[f"output_{label}"] == max(lengths.values()))
        for swap, winner in ((False, w_false), (True, w_true)):
            correct += winner == label
            nones += winner is None
            first, second = ("output_2", "output_1") if swap else ("output_1", "output_2")
            if winner is None:
                continue
            parsed += 1
            parsed_correct += winner == label
            rows.append(
                {
                    "item": index,
                    "judge_first": f"output_{winner}" == first,
                    "human_first": f"output_{label}" == first,
                    "lf": lengths[first],
                    "ls": lengths[second],
                }
            )
    rows = pd.DataFrame(rows)
    unequal = rows[rows["lf"] != rows["ls"]]
    labels = [True, False]
    table = pd.crosstab(rows["judge_first"], rows["human_first"]).reindex(
        index=labels, columns=labels, fill_value=0
    )
    x = np.tanh((rows["lf"] - rows["ls"]) / ((rows["lf"] + rows["ls"]) / 2))
    h = np.where(rows["human_first"], 1.0, -1.0)
    params, cov = _statsmodels(
        np.column_stack([np.ones(len(rows)), h, x]),
        rows["judge_first"].to_numpy(float),
        rows["item"].to_numpy(),
    )
    return {
        "position_consistency_llmbar": equal / n,
        "position_consistency_invalid_inconsistent": strict / n,
        "accuracy_with_invalid": correct / (2 * n),
        "accuracy": parsed_correct / parsed,
        "invalid_rate": nones / (2 * n),
        "kappa": sm_kappa(table.to_numpy()).kappa,
        "p_prefer_longer": float(
            (unequal["judge_first"] == (unequal["lf"] > unequal["ls"])).mean()
        ),
        # every item's gold label, parsed judge verdict or not
        "human_p_prefer_longer": float(np.mean(gold_longer)),
        "length_slope_given_human": params[2],
        "first_slot_rate_given_human": 1 / (1 + np.exp(-params[0])),
    }


@pytest.fixture(scope="module")
def llmbar(imported_build):
    return imported_build("llmbar", [LLMBAR / "dataset.json", *RESULTS])


@needs_llmbar
@pytest.mark.dbt
def test_llmbar_new_columns_equal_the_json(llmbar) -> None:
    _, result = llmbar
    got = query(result.db_path, "select * from pairwise_bias where opponent = 'all'")
    got = got.set_index("judge")
    for path in RESULTS:
        judge = path.name.split("__")[0]
        hand = llmbar_by_hand(path)
        for column, value in hand.items():
            assert got.loc[judge, column] == pytest.approx(value, abs=1e-6), (judge, column)
    # LLMBar's published statistics.json (Natural, Vanilla): PaLM2 equal 80/100,
    # correct_average 83.0%; invalid verdicts counted as inconsistent: 78/100
    assert got.loc["PaLM2", "position_consistency_llmbar"] == pytest.approx(0.80)
    assert got.loc["PaLM2", "accuracy_with_invalid"] == pytest.approx(0.83)
    assert got.loc["PaLM2", "position_consistency_invalid_inconsistent"] == pytest.approx(0.78)
    assert got.loc["PaLM2", "n_invalid"] == 4
    rejected = query(result.db_path, "select * from rejected_rows")
    assert len(rejected) == 4  # the invalid verdicts stay listed as rejected rows


# --- AlpacaEval, recomputed from the JSON files ---------------------------------

ALPACA = sorted((SHARED_DATA / "alpaca_eval").glob("*annotations.json"))
needs_alpaca = pytest.mark.skipif(not ALPACA, reason="../shared/data/alpaca_eval is absent")
BASELINE = "gpt4_1106_preview"  # the judge's (gpt-4-1106-preview's) own outputs


def alpaca_by_hand() -> dict[str, float]:
    """P(prefer longer), the judge's own-output share and the joint fit, from the
    annotations alone: the output shown first is referenced_models['m'];
    preference 1 / 2 names output_1 / output_2, 1.5 is a tie (left out)."""
    rows = []
    for path in ALPACA:
        for record in json.loads(path.read_text(encoding="utf-8")):
            if record["preference"] not in (1.0, 2.0):
                continue
            refs = record["referenced_models"]  # m shown first; one letter may be absent
            other = {"output_1": "output_2", "output_2": "output_1"}
            first = refs["m"] if "m" in refs else other[refs["M"]]
            second = other[first]
            winner = f"output_{int(record['preference'])}"
            gen = {"output_1": record["generator_1"], "output_2": record["generator_2"]}
            lf, ls = (len(TOKEN.findall(record[o])) for o in (first, second))
            rows.append(
                {
                    "prompt": record["instruction"],
                    "first_chosen": winner == first,
                    "own": 1.0 if gen[first] == BASELINE else -1.0,
                    "own_chosen": gen[winner] == BASELINE,
                    "lf": lf,
                    "ls": ls,
                }
            )
    df = pd.DataFrame(rows)
    differ = df[df["lf"] != df["ls"]]
    x = np.tanh((df["lf"] - df["ls"]) / ((df["lf"] + df["ls"]) / 2))
    design = np.column_stack([np.ones(len(df)), df["own"], x])
    params, cov = _statsmodels(design, df["first_chosen"].to_numpy(float), df["prompt"].to_numpy())
    return {
        "n_judgments": len(df),
        "self_preference_rate": df["own_chosen"].mean(),
        "p_prefer_longer": float((differ["first_chosen"] == (differ["lf"] > differ["ls"])).mean()),
        "own_longer_share": float(
            ((df["lf"] > df["ls"]) == (df["own"] > 0))[df["lf"] != df["ls"]].mean()
        ),
        "self_preference_logodds": params[1],
        "self_preference_logodds_se": float(np.sqrt(cov[1, 1])),
        "length_slope": params[2],
        "length_slope_se": float(np.sqrt(cov[2, 2])),
    }


@pytest.fixture(scope="module")
def alpaca(imported_build):
    return imported_build("alpaca-eval", ALPACA)


@needs_alpaca
@pytest.mark.dbt
def test_alpaca_prefer_longer_and_joint_fit_equal_the_json(alpaca) -> None:
    _, result = alpaca
    got = query(result.db_path, "select * from pairwise_bias where opponent = 'all'").iloc[0]
    joint = query(result.db_path, "select * from pairwise_joint_bias").iloc[0]
    hand = alpaca_by_hand()
    assert got["p_prefer_longer"] == pytest.approx(hand["p_prefer_longer"], abs=1e-12)
    assert np.isnan(got["human_p_prefer_longer"]) and np.isnan(got["accuracy"])  # no humans
    assert joint["n_judgments"] == hand["n_judgments"]
    assert joint["self_preference_rate"] == pytest.approx(hand["self_preference_rate"], abs=1e-12)
    for term in ("self_preference_logodds", "length_slope"):
        assert joint[term] == pytest.approx(hand[term], abs=1e-6)
        half = 1.959963984540054 * hand[f"{term}_se"]
        assert joint[f"{term}_ci_low"] == pytest.approx(hand[term] - half, abs=1e-6)
    assert not bool(joint["uses_human_verdict"])
    # holding length fixed, the self-preference shrinks but stays (docs/pairwise.md figures)
    assert (
        0
        < joint["self_preference_logodds"]
        < np.log(hand["self_preference_rate"] / (1 - hand["self_preference_rate"]))
    )
