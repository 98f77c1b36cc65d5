"""The AlpacaEval import on the real annotations (../shared/data/alpaca_eval):
it builds green with every record accepted, and the own-model (baseline)
preference per generator equals 1 - AlpacaEval's win rate computed straight
from the JSON, as do the slot and tie counts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from judge_bias.inputs.importers.alpaca_eval import pairwise_row, shown_first
from tests.conftest import SHARED_DATA, query
from tests.importing import assert_reconciled

FILES = sorted((SHARED_DATA / "alpaca_eval").glob("*annotations.json"))
needs_alpaca = pytest.mark.skipif(not FILES, reason="../shared/data/alpaca_eval is not present")
JUDGE = "gpt-4-1106-preview"  # alpaca_eval_cot_gpt4_turbo_fn's model, and the baseline's


def raw_figures(path: Path) -> dict[str, float]:
    """Per file, straight from the JSON: AlpacaEval's win rate of generator_2 (mean of
    preference - 1, a 1.5 counting one half), the baseline's decisive wins, ties,
    and first-slot wins (the slot from referenced_models, m = shown first)."""
    records = json.loads(path.read_text(encoding="utf-8"))
    prefs = [float(r["preference"]) for r in records]
    decisive = [r for r in records if float(r["preference"]) in (1.0, 2.0)]
    first_wins = 0
    for r in decisive:
        letters = r["referenced_models"]
        winner = "output_1" if float(r["preference"]) == 1.0 else "output_2"
        m = letters.get("m") or ({"output_1", "output_2"} - {letters["M"]}).pop()
        first_wins += winner == m
    return {
        "generator": records[0]["generator_2"],
        "n": len(records),
        "win_rate": sum(p - 1 for p in prefs) / len(prefs),
        "ties": sum(p == 1.5 for p in prefs),
        "own_decisive_share": sum(float(r["preference"]) == 1.0 for r in decisive) / len(decisive),
        "first_slot_share": first_wins / len(decisive),
    }


def discrete_win_rate(path: Path) -> float:
    """AlpacaEval's discrete win rate of generator_2, in pandas on the JSON as its
    own code defines it (tatsu-lab/alpaca_eval, src/alpaca_eval/metrics/helpers.py,
    ZeroOneScoringRule.describe_head2head): a preference of 1.5 (or 0) is a draw and
    counts 1.5, the others are rounded to 1 or 2, non-preferences (null) are dropped,
    and the win rate is the mean of preference - 1: a tie is half a win."""
    prefs = pd.Series([r["preference"] for r in json.loads(path.read_text())], dtype=float)
    draw = (prefs == 1.5) | (prefs == 0)
    scored = prefs.round().where(~draw, 1.5)
    scored = scored[scored.isin([1.0, 1.5, 2.0])]
    return float((scored - 1).mean())


@pytest.fixture(scope="module")
def alpaca(imported_build):
    return imported_build("alpaca-eval", FILES)


def test_slot_order_and_preferences_map_to_slots() -> None:
    assert shown_first({"m": "output_2", "M": "output_1"}) == "output_2"
    assert shown_first("{'M': 'output_1', 'm': 'output_2'}") == "output_2"
    assert shown_first({"M": "output_2"}) == "output_1"  # the other letter is the other output
    assert shown_first(None) is None
    base = {"instruction": "i", "annotator": "a", "generator_1": "g1", "generator_2": "g2"}
    cases = [
        ({"m": "output_1"}, 1.0, ("g1", "g2", "first", 1.0), True),
        ({"m": "output_2"}, 1.0, ("g2", "g1", "second", 0.0), True),
        ({"m": "output_2"}, 2.0, ("g2", "g1", "first", 1.0), True),
        ({"m": "output_2"}, 1.25, ("g2", "g1", "second", 0.25), True),
        (None, 1.5, ("g1", "g2", "tie", 0.5), True),
        (None, 1.0, ("", "", 1.0, None), False),  # slot order unknown: rejected by the build
        ({"m": "output_1"}, None, ("g1", "g2", None, None), False),
    ]
    for letters, pref, expected, mapped in cases:
        row, reason = pairwise_row(
            base | {"referenced_models": letters, "preference": pref}, 0, "f"
        )
        ok = reason is None
        got = (row["model_first"], row["model_second"], row["verdict"], row.get("p_first"))
        assert (got, ok) == (expected, mapped), (letters, pref)


@needs_alpaca
def test_builds_green_and_every_record_is_a_row(alpaca) -> None:
    out, result = alpaca
    counts = assert_reconciled(out, result)
    n_records = sum(raw_figures(f)["n"] for f in FILES)
    assert counts["pairwise_judgments"] == (n_records, 0)
    assert counts["prompts"] == (805, 0)
    assert counts["completions"] == (805 * (len(FILES) + 1), 0)  # the baseline's once


@needs_alpaca
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.split("__")[0])
def test_own_preference_is_one_minus_win_rate(alpaca, path: Path) -> None:
    _, result = alpaca
    raw = raw_figures(path)
    got = query(
        result.db_path,
        f"select * from pairwise_bias where judge = '{JUDGE}' and opponent = '{raw['generator']}'",
    ).iloc[0]
    assert got["n_judgments"] == raw["n"]
    assert got["n_ties"] == raw["ties"]
    assert got["self_preference_prob"] == pytest.approx(1 - raw["win_rate"], abs=1e-12)
    assert got["self_preference_rate"] == pytest.approx(raw["own_decisive_share"], abs=1e-12)
    assert got["first_slot_rate"] == pytest.approx(raw["first_slot_share"], abs=1e-12)
    # AlpacaEval's discrete_win_rate rule (a tie one half) from the verdicts, not from p_first
    assert got["n_self_preference_ties"] == raw["ties"] > 0
    assert got["self_preference_rate_ties_half"] == pytest.approx(
        1 - discrete_win_rate(path), abs=1e-12
    )
    if raw["generator"] == "alpaca-7b":  # 784 own wins, 3 ties, 18 losses (session 20)
        assert got["self_preference_rate_ties_half"] == pytest.approx(785.5 / 805, abs=1e-12)
        assert got["self_preference_rate"] == pytest.approx(784 / 802, abs=1e-12)


# Records in the schema of AlpacaEval's published annotations (tatsu-lab/alpaca_eval,
# results/<generator>/alpaca_eval_cot_gpt4_turbo_fn/annotations.json and
# results/<generator>/weighted_alpaca_eval_gpt4_turbo/annotations.json), texts shortened.
def _annotation(i: int, preference: object, letters: object, annotator: str) -> dict:
    record = {
        "instruction": f"instruction {i}", "output_1": "baseline answer",
        "generator_1": "gpt4_1106_preview", "dataset": "helpful_base",
        "output_2": "model answer", "generator_2": "alpaca-7b", "annotator": annotator,
        "preference": preference, "price_per_example": 0.01, "time_per_example": 1.2,
        "raw_completion": {"concise_explanation": "...", "ordered_models": []},
    }  # fmt: skip
    if letters is not None:
        record["referenced_models"] = letters
    return record


COT = "alpaca_eval_cot_gpt4_turbo_fn"
M_FIRST = {"m": "output_1", "M": "output_2"}
ANNOTATIONS = {
    f"alpaca-7b/{COT}/annotations.json": [
        _annotation(0, 1.0, M_FIRST, COT),
        _annotation(1, 2.0, {"m": "output_2", "M": "output_1"}, COT),
        _annotation(2, 1.5, None, COT),  # a tie: either order
        _annotation(3, None, None, COT),  # unparsed: null preference, no letters
        _annotation(4, None, M_FIRST, COT),  # null preference, letters kept
    ],
    # logprob preferences; the letters shown are not recorded: slot order unknown
    "alpaca-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json": [
        _annotation(0, 1.0000001827, None, "weighted_alpaca_eval_gpt4_turbo"),
    ],
}


@pytest.fixture(scope="module")
def annotations(tmp_path_factory: pytest.TempPathFactory):
    from tests.importing import import_and_build

    root = tmp_path_factory.mktemp("alpaca_files")
    paths = []
    for name, records in ANNOTATIONS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records), encoding="utf-8")
        paths.append(path)
    return import_and_build("alpaca-eval", paths, tmp_path_factory)


def test_null_preferences_are_rejected_for_their_verdict(annotations) -> None:
    out, result = annotations
    records = [r for rs in ANNOTATIONS.values() for r in rs]
    null = sum(r["preference"] is None for r in records)
    no_order = sum(
        r["preference"] not in (None, 1.5) and "referenced_models" not in r for r in records
    )
    counts = assert_reconciled(out, result)
    assert counts["pairwise_judgments"] == (len(records), null + no_order) == (6, 3)
    rejected = query(
        result.db_path,
        "select reason, raw_values from rejected_rows where source = 'pairwise_judgments' "
        "order by row_number",
    )
    assert rejected["reason"].tolist()[:2] == ["verdict is empty", "verdict is empty"]
    assert "unknown" in rejected["raw_values"].iloc[2]  # slot_order unknown


def test_unmapped_records_are_counted_by_reason(tmp_path: Path, capsys) -> None:
    """AlpacaEval's older annotations (results/gpt4/annotation_alpaca_eval_gpt4.json,
    alpaca_eval_gpt4_turbo_fn/annotations.json) carry no referenced_models: each
    decisive record is rejected for its unknown slot order, which the import names
    apart from null preferences."""
    from judge_bias.inputs.importers.alpaca_eval import import_alpaca_eval

    base = {"instruction": "How did US states get their names?", "output_1": "a",
            "generator_1": "text_davinci_003", "dataset": "helpful_base", "output_2": "b",
            "generator_2": "gpt4", "annotator": "alpaca_eval_gpt4"}  # fmt: skip
    records = [
        base | {"preference": 2},
        base | {"instruction": "How do I wrap a present neatly?", "preference": 1.0},
        base | {"instruction": "x", "preference": 1.5},  # a tie: mapped in stored order
        base | {"instruction": "y", "preference": None, "referenced_models": {"m": "output_1"}},
        # a null preference with neither generator_1 nor referenced_models: its model_first
        # is empty, yet it is a null preference, not a decisive record of unknown order
        {k: v for k, v in base.items() if k != "generator_1"} | {"preference": None},
    ]
    path = tmp_path / "annotation_alpaca_eval_gpt4.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    import_alpaca_eval([path], tmp_path / "out")
    no_order = sum(
        r["preference"] not in (None, 1.5) and "referenced_models" not in r for r in records
    )
    null = sum(r["preference"] is None for r in records)
    err = capsys.readouterr().err
    assert f"{no_order} decisive record(s) without referenced_models" in err
    assert f"{null} record(s) with a null or unreadable preference" in err
