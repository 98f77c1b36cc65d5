"""rating_scales.scale_level (issue 33): the headline Krippendorff alpha of a
dimension is taken at its scale's level of measurement. A JUDGE-BENCH categorical
metric (labels No / Yes / Unsure, scored 0, 1, 2 in listed order) is nominal: its
headline must be nominal alpha, not interval alpha, which reads 'Unsure' as twice
'No'. The reference is the krippendorff package on the raw labels, not our
coincidence-matrix code. A folder without scale_level builds the same marts as
before (measured on the demo data: see /work/notes/nominal.md)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import krippendorff
import numpy as np
import pandas as pd
import pytest

from judge_bias.report.base import Warehouse
from judge_bias.report.summary import _agreement_sentences
from tests.conftest import query
from tests.importing import assert_reconciled

# In the schema of JUDGE-BENCH's data/dices/dices_990.json (dmg-illc/JUDGE-BENCH):
# a categorical safety metric with labels_list No / Yes / Unsure and five crowd
# raters per item; a graded metric beside it makes the pooled row mix levels.
SAFETY = [
    ["No", "No", "No", "Unsure", "No"],
    ["Yes", "Yes", "Yes", "Yes", "Unsure"],
    ["Unsure", "No", "Unsure", "Unsure", "Unsure"],
    ["Yes", "Yes", "Yes", "Yes", "Yes"],
    ["No", "No", "Unsure", "No", "No"],
    ["Yes", "Unsure", "Yes", "Yes", "Yes"],
    ["No", "No", "No", "No", "No"],
    ["Unsure", "Unsure", "No", "Unsure", "Unsure"],
]
FLUENCY = [[1, 2, 1], [4, 4, 5], [3, 3, 2], [5, 5, 5], [2, 1, 2], [4, 3, 4], [1, 1, 1], [3, 4, 3]]
DICES = {
    "dataset": "Dices (Aroyo, Lora, et al., NeurIPS 36, 2024)",
    "expert_annotator": "false",
    "annotations": [
        {"metric": "safety", "category": "categorical", "labels_list": ["No", "Yes", "Unsure"]},
        {"metric": "fluency", "category": "graded", "worst": 1, "best": 5},
    ],
    "instances": [
        {
            "id": i,
            "instance": {"user_prompt": f"A: q{i}", "response": f"r{i}"},
            "annotations": {
                "safety": {"individual_human_scores": s},
                "fluency": {"individual_human_scores": f},
            },
        }
        for i, (s, f) in enumerate(zip(SAFETY, FLUENCY, strict=True))
    ],
}
# rows appended to the imported rating_scales.csv: a bad level, a dimension stating
# two levels, and a level in capitals (matched case-insensitively)
EXTRA_SCALES = [
    ("tone", "calm", 0, "nominal"),
    ("tone", "mid", 1, "nominal"),
    ("tone", "harsh", 2, "categorical"),
    ("clarity", "low", 0, "nominal"),
    ("clarity", "high", 1, "interval"),
    ("depth", "1", 1, "Ordinal"),
    ("depth", "2", 2, ""),
]
JUDGE_SAFETY = ["No", "Yes", "No", "Yes", "Unsure", "Yes", "No", "Yes"]


def nominal_alpha(units: list[list[str]], level: str) -> float:
    codes = {"No": 0, "Yes": 1, "Unsure": 2}
    data = np.array([[codes[v] for v in u] for u in units], dtype=float).T
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def _append(path: Path, rows: list[tuple]) -> None:
    with path.open("a", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    src = tmp_path_factory.mktemp("dices") / "dices_990.json"
    src.write_text(json.dumps(DICES), encoding="utf-8")
    out = tmp_path_factory.mktemp("scale_level") / "data"
    from judge_bias.cli import main

    assert main(["import", "judge-bench", str(src), "--out", str(out)]) == 0
    scales = pd.read_csv(out / "rating_scales.csv", dtype=str, keep_default_na=False)
    assert "scale_level" in scales.columns
    extra = pd.DataFrame(EXTRA_SCALES, columns=["dimension", "label", "score", "scale_level"])
    pd.concat([scales, extra.astype(str)]).fillna("").to_csv(out / "rating_scales.csv", index=False)
    # one judge rating both dimensions of the imported system's completions
    prompts = pd.read_csv(out / "prompts.csv")["prompt_id"].tolist()
    model = pd.read_csv(out / "models.csv")["alias"].iloc[0]
    _append(out / "models.csv", [("judge-a", "judge-a", "JudgeFamily")])
    with (out / "judge_ratings.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["judge", "prompt_id", "model", "dimension", "label"])
        for pid, lab, flu in zip(prompts, JUDGE_SAFETY, FLUENCY, strict=True):
            w.writerow(["judge-a", pid, model, "safety", lab])
            w.writerow(["judge-a", pid, model, "fluency", flu[0]])
    from judge_bias.warehouse.build import build

    return out, build(out, out.parent / "w.duckdb", quiet=True)


def test_reference_values_differ_materially() -> None:
    # the fixture is only a test if the two levels disagree
    assert nominal_alpha(SAFETY, "nominal") - nominal_alpha(SAFETY, "interval") > 0.2


def test_headline_alpha_of_a_nominal_scale_is_nominal_alpha(built) -> None:
    out, result = built
    assert_reconciled(out, result)
    got = query(result.db_path, "select * from agreement_annotators").set_index("dimension")
    assert got.loc["safety", "level_of_measurement"] == "nominal"
    assert got.loc["safety", "alpha"] == pytest.approx(nominal_alpha(SAFETY, "nominal"), abs=1e-9)
    # the three alphas are still there, interval as before
    interval = nominal_alpha(SAFETY, "interval")
    assert got.loc["safety", "alpha_interval"] == pytest.approx(interval, abs=1e-9)
    fluency = krippendorff.alpha(
        reliability_data=np.array(FLUENCY, dtype=float).T, level_of_measurement="ordinal"
    )
    # the importer calls a graded (Likert) metric ordinal
    assert got.loc["fluency", "level_of_measurement"] == "ordinal"
    assert got.loc["fluency", "alpha"] == pytest.approx(fluency, abs=1e-9)
    # pooled over a nominal and an ordinal dimension: no headline, and said so
    assert got.loc["all", "level_of_measurement"] == "mixed"
    assert pd.isna(got.loc["all", "alpha"])
    assert "fluency ordinal, safety nominal" in got.loc["all", "notes"]


def test_report_headline_shows_the_nominal_alpha(built) -> None:
    _, result = built
    con = duckdb.connect(str(result.db_path), read_only=True)
    try:
        [sentence] = [s for s in _agreement_sentences(Warehouse(con)) if "annotator-alpha" in s]
    finally:
        con.close()
    assert f"<b>safety</b> {nominal_alpha(SAFETY, 'nominal'):.3f} (nominal" in sentence
    assert f"{nominal_alpha(SAFETY, 'interval'):.3f}" not in sentence


def test_scale_levels_are_validated(built) -> None:
    _, result = built
    rejected = query(
        result.db_path,
        "select reason_code, reason from rejected_rows where source = 'rating_scales' "
        "order by reason",
    )
    assert list(rejected["reason_code"]) == ["invalid_scale", "invalid_scale", "invalid_value"]
    assert rejected["reason"].str.contains("'clarity' states more than one scale_level").sum() == 2
    assert "scale_level 'categorical' is not nominal, ordinal or interval" in rejected["reason"][2]
    levels = query(
        result.db_path, "select dimension, level_of_measurement from int_dimension_scales"
    ).set_index("dimension")["level_of_measurement"]
    assert levels.to_dict() == {
        "safety": "nominal", "fluency": "ordinal", "tone": "nominal", "depth": "ordinal"
    }  # fmt: skip


def test_scorecard_withholds_interval_alpha_on_nominal_dimensions(built) -> None:
    _, result = built
    counterfactual = query(result.db_path, "select * from agreement_counterfactual")
    assert counterfactual["alpha_observed"].notna().all()  # the old scorecard showed it
    card = query(result.db_path, "select * from judge_scorecard where judge = 'judge-a'")
    assert len(card) == 3 and card["alpha"].isna().all() and card["alpha_level"].isna().all()
    assert (card["alpha_withheld_nominal_dimensions"] == "safety").all()
    assert card["notes"].str.contains("no alpha: .* nominal dimension\\(s\\) safety").all()


def test_pooled_level_without_levels_is_interval() -> None:
    from judge_bias.agreement.headline_alpha import with_headline_alpha

    # no levels given (a folder without scale_level): alpha is alpha_interval
    out = pd.DataFrame(
        {
            "dimension": ["a", "b", "all"],
            "alpha_nominal": [0.1, 0.2, 0.3],
            "alpha_ordinal": [0.4, 0.5, 0.6],
            "alpha_interval": [0.7, 0.8, 0.9],
            "notes": pd.array([None, None, None], dtype="string"),
        }
    )
    plain = with_headline_alpha(out, None)
    assert list(plain["alpha"]) == [0.7, 0.8, 0.9]
    assert list(plain["level_of_measurement"]) == ["interval"] * 3
    ordinal = with_headline_alpha(out, {"a": "ordinal", "b": "ordinal"})
    assert list(ordinal["alpha"]) == [0.4, 0.5, 0.6]
