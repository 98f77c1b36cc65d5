"""The LLMBar import on the real Natural set (../shared/data/llmbar_natural): both
orders of every item, the gold label as the human verdict, None verdicts
rejected with a reason; positional agreement and accuracy per judge equal
LLMBar's figures recomputed from the result files."""

from __future__ import annotations

import json
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
