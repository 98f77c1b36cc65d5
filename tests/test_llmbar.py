"""The LLMBar import on the real Natural set (../shared/data/llmbar_natural): both
orders of every item, the gold label as the human verdict, None verdicts
rejected with a reason; positional agreement and accuracy per judge equal
LLMBar's figures recomputed from the result files."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from judge_bias.inputs.importers.llmbar import judge_and_strategy
from tests.conftest import SHARED_DATA, query
from tests.importing import assert_reconciled

LLMBAR = SHARED_DATA / "llmbar_natural"
RESULTS = sorted(LLMBAR.glob("*__result.json"))
needs_llmbar = pytest.mark.skipif(not RESULTS, reason="../shared/data/llmbar_natural is absent")


def raw_figures(path: Path) -> dict[str, float]:
    """LLMBar's positional agreement (the two orders name the same output) over the
    items whose two answers were both parsed, and accuracy against the label over
    the parsed answers, straight from one result file."""
    items = json.loads(path.read_text(encoding="utf-8"))
    both = agree = parsed = correct = unparsed = 0
    for item in items:
        winners = [item["results"][0][k]["winner"] for k in ("swap = False", "swap = True")]
        unparsed += sum(w is None for w in winners)
        for w in winners:
            if w is not None:
                parsed += 1
                correct += str(w) == str(item["label"])
        if None not in winners:
            both += 1
            agree += winners[0] == winners[1]
    return {
        "items": len(items),
        "pairs": both,
        "agreement": agree / both,
        "accuracy": correct / parsed,
        "unparsed": unparsed,
    }


@pytest.fixture(scope="module")
def llmbar(imported_build):
    return imported_build("llmbar", [LLMBAR / "dataset.json", *RESULTS])


def test_judge_and_strategy_from_either_layout() -> None:
    assert judge_and_strategy(Path("x/GPT-4__Vanilla__result.json")) == ("GPT-4", "Vanilla")
    assert judge_and_strategy(Path("out/Falcon/CoT/result.json")) == ("Falcon", "CoT")
    with pytest.raises(ValueError, match="result.json"):
        judge_and_strategy(Path("results.json"))


@needs_llmbar
def test_builds_green_with_none_verdicts_rejected(llmbar) -> None:
    out, result = llmbar
    counts = assert_reconciled(out, result)
    raws = [raw_figures(p) for p in RESULTS]
    assert counts["pairwise_judgments"] == (
        2 * sum(r["items"] for r in raws),
        sum(r["unparsed"] for r in raws),
    )
    rejected = query(result.db_path, "select * from rejected_rows")
    assert set(rejected["reason_code"]) <= {"invalid_value"}
    assert rejected["reason"].str.contains("verdict 'None'").all()


@needs_llmbar
@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name.split("__")[0])
def test_positional_agreement_and_accuracy_equal_llmbar(llmbar, path: Path) -> None:
    _, result = llmbar
    judge, _ = judge_and_strategy(path)
    raw = raw_figures(path)
    got = query(
        result.db_path, f"select * from pairwise_bias where judge = '{judge}' and opponent = 'all'"
    ).iloc[0]
    assert got["n_pairs"] == raw["pairs"]
    assert got["position_consistency"] == pytest.approx(raw["agreement"], abs=1e-12)
    accuracy = query(
        result.db_path,
        "select avg(case when verdict = human_verdict then 1.0 else 0.0 end) as a "
        f"from int_pairwise_checked where reject_code is null and judge = '{judge}'",
    )["a"].iloc[0]
    assert accuracy == pytest.approx(raw["accuracy"], abs=1e-12)


@needs_llmbar
def test_scorecard_judges_pairwise_only_data_by_accuracy_against_gold(llmbar) -> None:
    """Pairwise-only data (no ratings, so no Spearman): the scorecard's agreement with
    humans is the accuracy against LLMBar's gold verdicts, equal to LLMBar's own figure
    from the raw result files, so no judge is left at 'insufficient evidence'."""
    _, result = llmbar
    card = query(result.db_path, "select * from judge_scorecard where dimension = 'all'")
    for path in RESULTS:
        judge, _ = judge_and_strategy(path)
        row = card[card["judge"] == judge].iloc[0]
        assert row["pairwise_accuracy"] == pytest.approx(raw_figures(path)["accuracy"], abs=1e-12)
        assert row["pairwise_accuracy_ci_low"] < row["pairwise_accuracy"]
        assert row["pairwise_accuracy"] < row["pairwise_accuracy_ci_high"]
        assert row["verdict"] != "insufficient evidence", row.to_dict()
    print("\n" + card[["judge", "pairwise_accuracy", "pairwise_kappa", "position_consistency",
                       "verdict", "verdict_reasons"]].to_string())  # fmt: skip


@needs_llmbar
def test_recomputation_matches_hand_counts() -> None:
    # GPT-4: 95 of 100 items agree in both orders; PaLM2: two items unparsed in
    # both orders, 78 of the other 98 agree (counted once with a separate script on the files).
    figures = {judge_and_strategy(p)[0]: raw_figures(p) for p in RESULTS}
    assert figures["GPT-4"]["agreement"] == 0.95
    assert (figures["PaLM2"]["pairs"], figures["PaLM2"]["unparsed"]) == (98, 4)
    assert figures["PaLM2"]["agreement"] == pytest.approx(78 / 98)


# Excerpts of LLMBar's Adversarial/Neighbor subset in the repository's layout
# (Dataset/LLMBar/Adversarial/Neighbor/dataset.json and
# evaluators/GPT-4/Rating/result.json): the Rating strategies score each output,
# ``score_<k>`` = [score, finish_reason], beside the two orders' winners.
NEIGHBOR = [
    {"input": "Convert from celsius to fahrenheit. Temperature in Celsius: 15",
     "output_1": "77\u00b0F", "output_2": "59.0\u00b0 Fahrenheit", "label": 2},
    {"input": "Construct a database system to store customer records in a car dealership.",
     "output_1": "The customer data model should include a customer table.",
     "output_2": "The database should include fields to store customer-related information.",
     "label": 2},
]  # fmt: skip
RATING = [
    {**NEIGHBOR[0], "results": [{"score_1": ["4", "stop"], "score_2": ["9", "stop"],
                                 "swap = False": {"winner": "2"}, "swap = True": {"winner": "2"}}]},
    {**NEIGHBOR[1], "results": [{"score_1": ["0", "stop"], "score_2": ["0", "stop"],
                                 "swap = False": {"winner": "2"}, "swap = True": {"winner": "1"}}]},
]  # fmt: skip
NATURAL = [{"input": "Name a fruit.", "output_1": "Apple.", "output_2": "A car.", "label": 1}]
NATURAL_RESULT = [
    {**NATURAL[0], "results": [{"swap = False": {"winner": "1", "completion": "Output (a)"},
                                "swap = True": {"winner": "2", "completion": "Output (b)"}}]},
]  # fmt: skip


def _write_subsets(root: Path) -> list[Path]:
    """Natural flat (<judge>__<strategy>__result.json beside dataset.json) and Neighbor
    in the repository's nested layout, as a user holding both would have them."""
    neighbor = root / "Adversarial" / "Neighbor"
    files = {
        root / "Natural" / "dataset.json": NATURAL,
        root / "Natural" / "ChatGPT__Vanilla__result.json": NATURAL_RESULT,
        neighbor / "dataset.json": NEIGHBOR,
        neighbor / "evaluators" / "GPT-4" / "Rating" / "result.json": RATING,
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
    return list(files)


def _pairwise(out: Path) -> list[dict[str, str]]:
    with (out / "pairwise_judgments.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_rating_results_keep_each_outputs_score(tmp_path: Path) -> None:
    from judge_bias.inputs.importers.llmbar import import_llmbar

    files = _write_subsets(tmp_path / "LLMBar")
    import_llmbar(files[2:], tmp_path / "out")
    rows = _pairwise(tmp_path / "out")
    expected = [
        (f"Neighbor-{i}", swap, r["results"][0]["score_1"][0], r["results"][0]["score_2"][0])
        for i, r in enumerate(RATING)
        for swap in ("false", "true")
    ]
    got = [(r["prompt_id"], r["swap"], r["score_1"], r["score_2"]) for r in rows]
    assert got == expected
    assert {r["run_id"] for r in rows} == {"Rating"} and {r["judge"] for r in rows} == {"GPT-4"}


def test_subsets_import_together_each_result_with_its_dataset(tmp_path: Path) -> None:
    from judge_bias.inputs.importers.llmbar import import_llmbar

    files = _write_subsets(tmp_path / "LLMBar")
    counts = import_llmbar(files, tmp_path / "out")
    rows = _pairwise(tmp_path / "out")
    by_run = Counter((r["run_id"], r["prompt_id"].split("-")[0]) for r in rows)
    assert by_run == {
        ("Vanilla", "Natural"): 2 * len(NATURAL),
        ("Rating", "Neighbor"): 2 * len(RATING),
    }
    assert counts["prompts"] == len(NATURAL) + len(NEIGHBOR)
    assert counts["completions"] == 2 * (len(NATURAL) + len(NEIGHBOR))
    # the human verdict is each subset's own label, in the slot of that order
    natural = [r for r in rows if r["run_id"] == "Vanilla"]
    assert [r["human_verdict"] for r in natural] == ["first", "second"]  # label 1, both orders


def test_a_result_outside_every_subset_is_an_error(tmp_path: Path) -> None:
    from judge_bias.errors import InputError
    from judge_bias.inputs.importers.llmbar import import_llmbar

    files = _write_subsets(tmp_path / "LLMBar")
    stray = tmp_path / "elsewhere" / "GPT-4__Vanilla__result.json"
    stray.parent.mkdir()
    stray.write_text(json.dumps(NATURAL_RESULT), encoding="utf-8")
    with pytest.raises(InputError, match="none in a folder above"):
        import_llmbar([*files, stray], tmp_path / "out")


INTERVAL_MARTS = ("pairwise_bias", "pairwise_perplexity_bins", "pairwise_joint_bias")


def test_ci_method_is_null_exactly_where_a_row_has_no_interval(
    imported_build, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The Neighbor Rating excerpt (one judge, both orders of 2 items) separates
    completely: pairwise_joint_bias has no interval, and its ci_method named a method
    all the same. Per row of each pairwise mart: ci_method is null exactly when every
    *_ci_low and *_ci_high is null."""
    files = _write_subsets(tmp_path_factory.mktemp("neighbor") / "LLMBar")[2:]
    _, result = imported_build("llmbar", files)
    seen_without = 0
    for mart in INTERVAL_MARTS:
        table = query(result.db_path, f"select * from {mart}")
        bounds = [c for c in table.columns if c.endswith(("_ci_low", "_ci_high"))]
        assert bounds, mart
        without = table[bounds].isna().all(axis=1)
        seen_without += int(without.sum())
        assert (table["ci_method"].isna() == without).all(), mart
    assert seen_without >= 1  # the excerpt has such a row: the test can fail


@pytest.mark.parametrize(
    "mart",
    ["pairwise/pairwise_bias", "pairwise/pairwise_perplexity_bins",
     "pairwise_human/pairwise_joint_bias", "perturbation/perturbation_bias"],
)  # fmt: skip
def test_ci_method_is_gated_on_every_interval_of_its_mart(mart: str) -> None:
    """Each mart with ci_method names it only where one of its bounds is not null:
    the coalesce before ``then ci_method`` lists every *_ci_low and *_ci_high the
    mart selects (perturbation_bias has no built fixture above: this holds it)."""
    import re

    from tests.conftest import PROJECT_DIR

    sql = (PROJECT_DIR / "models" / "marts" / f"{mart}.sql").read_text(encoding="utf-8")
    bounds = set(re.findall(r"as double\) as (\w+_ci_(?:low|high))\b", sql))
    gate = re.search(r"case when coalesce\(([^)]*)\) is not null then ci_method end", sql)
    assert bounds and gate, mart
    assert {c.strip() for c in gate.group(1).split(",")} == bounds


# LLMBar's evaluate.py for Metrics (Reference, Metrics_Reference, Rating_*): the
# auxiliary output [text, finish_reason] comes before the verdict dict, which it
# reads as results[-1].
METRICS = [
    {**NEIGHBOR[0], "results": [
        ["1. Is the conversion correct?", "stop"],
        {"swap = False": {"winner": "2", "completion": ["Output (b)", "stop"]},
         "swap = True": {"winner": "1", "completion": ["Output (a)", "stop"]}}]},
    {**NEIGHBOR[1], "results": [
        ["1. Does it store records?", "stop"],
        {"swap = False": {"winner": None, "completion": ["?", "stop"]},
         "swap = True": {"winner": "2", "completion": ["Output (a)", "stop"]}}]},
]  # fmt: skip


def _import_one(tmp_path: Path, result: list[dict], strategy: str) -> list[dict[str, str]]:
    from judge_bias.inputs.importers.llmbar import import_llmbar

    folder = tmp_path / "Neighbor"
    (folder / "evaluators" / "GPT-4" / strategy).mkdir(parents=True)
    (folder / "dataset.json").write_text(json.dumps(NEIGHBOR), encoding="utf-8")
    path = folder / "evaluators" / "GPT-4" / strategy / "result.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    import_llmbar([folder / "dataset.json", path], tmp_path / "out")
    return _pairwise(tmp_path / "out")


def test_metrics_results_take_the_last_entry_and_keep_the_auxiliary_text(
    tmp_path: Path,
) -> None:
    rows = _import_one(tmp_path, METRICS, "Metrics")
    # by hand: winner "2" with output_1 first = second; winner "1" with output_2
    # first = second; None stays None; winner "2" with output_2 first = first
    assert [r["verdict"] for r in rows] == ["second", "second", "None", "first"]
    assert [r["auxiliary"] for r in rows] == [
        item["results"][0][0] for item in METRICS for _ in range(2)
    ]


# Rating: each output scored alone; LLMBar's winners ("1" if s1 > s2 else "2",
# "2" if s2 > s1 else "1", "1"/"2" when int() fails) say nothing of order.
RATING_TIES = [
    {**NEIGHBOR[0], "results": [{"score_1": ["7", "stop"], "score_2": ["7", "stop"],
                                 "swap = False": {"winner": "2"}, "swap = True": {"winner": "1"}}]},
    {**NEIGHBOR[1], "results": [{"score_1": ["Score: 8", "stop"], "score_2": ["3", "stop"],
                                 "swap = False": {"winner": "1"}, "swap = True": {"winner": "2"}}]},
]  # fmt: skip


def test_rating_verdicts_come_from_the_scores_tie_and_unparsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _import_one(tmp_path, RATING_TIES, "Rating")
    assert [r["verdict"] for r in rows] == ["tie", "tie", "None", "None"]
    assert "2 verdict(s)" in capsys.readouterr().err
    rows = _import_one(tmp_path / "again", RATING, "Rating")
    # RATING: 4 < 9 -> output_2 better: second with output_1 first, first swapped;
    # 0 = 0 -> tie in both orders
    assert [r["verdict"] for r in rows] == ["second", "first", "tie", "tie"]
