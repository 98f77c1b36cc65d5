"""The self-recognition import (XSUM, Panickssery et al. 2024) built end to end: a
warehouse with pairwise judgments and no ratings builds green, and
int_pairwise_checked gives, per judge, the counts the pairwise marts start from,
equal to an independent count straight from the JSON files."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from judge_bias.inputs.importers.self_recognition import judge_from_file_name, pairwise_rows
from judge_bias.warehouse.build import BuildResult, build
from tests.conftest import SHARED_DATA, query

XSUM = SHARED_DATA / "self_recognition_xsum"
XSUM_FILES = sorted(XSUM.glob("*_results.json"))
needs_xsum = pytest.mark.skipif(not XSUM_FILES, reason="../shared/data is not present")

# Records with comparisons the warehouse cannot read: each such row is rejected
# with a reason, never dropped.
ODD_RECORDS = [
    {"key": "a1", "model": "gpt4", "forward_comparison": "1", "backward_comparison": "2"},
    {"key": "a1", "model": "human", "forward_comparison": "", "backward_comparison": "1"},
    {"key": "a2", "model": "gpt4", "forward_comparison": "3", "backward_comparison": None},
    {"key": "a2", "model": "human", "backward_comparison": "2"},
    {"key": "a3", "model": "gpt4", "forward_comparison": 2, "backward_comparison": " 1 "},
]


def independent_counts(path: Path) -> dict[str, float]:
    """Per-judge figures from one results file, counted record by record in plain
    Python. A comparison counts when it is "1" or "2" (after trimming)."""
    judge = Path(path).name.split("_results")[0]
    records = json.loads(Path(path).read_text(encoding="utf-8"))
    tally: Counter[str] = Counter()
    for rec in records:
        fwd = str(rec.get("forward_comparison") or "").strip()
        bwd = str(rec.get("backward_comparison") or "").strip()
        tally["rows"] += 2
        # forward: own summary in slot 1; backward: own summary in slot 2
        for choice, own_slot in ((fwd, "1"), (bwd, "2")):
            if choice in ("1", "2"):
                tally["verdicts"] += 1
                tally["first_slot"] += choice == "1"
                tally["own_chosen"] += choice == own_slot
        if fwd in ("1", "2") and bwd in ("1", "2"):
            tally["pairs_both_orders"] += 1
            own_both = fwd == "1" and bwd == "2"
            other_both = fwd == "2" and bwd == "1"
            tally["consistent"] += own_both or other_both
    return {
        "judge": judge,
        "rows": tally["rows"],
        "pairs_both_orders": tally["pairs_both_orders"],
        "position_consistency": tally["consistent"] / tally["pairs_both_orders"],
        "first_slot_share": tally["first_slot"] / tally["verdicts"],
        "self_preference_share": tally["own_chosen"] / tally["verdicts"],
    }


WAREHOUSE_COUNTS = """
with accepted as (
    select
        *,
        case verdict when 'first' then model_first when 'second' then model_second end
            as chosen
    from int_pairwise_checked
    where reject_code is null
),
pairs as (
    select judge, pair_key, count(distinct chosen) = 1 as consistent
    from accepted
    where has_swapped
    group by judge, pair_key
)
select
    a.judge,
    count(*) as verdicts,
    avg(case when verdict = 'first' then 1.0 else 0.0 end) as first_slot_share,
    avg(case when chosen = judge then 1.0 else 0.0 end) as self_preference_share,
    (select count(*) from pairs as p where p.judge = a.judge) as pairs_both_orders,
    (select avg(case when consistent then 1.0 else 0.0 end) from pairs as p
        where p.judge = a.judge) as position_consistency
from accepted as a
group by a.judge
"""


@pytest.fixture(scope="module")
def xsum(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuildResult, list[Path]]:
    from judge_bias.cli import main

    if not XSUM_FILES:
        pytest.skip("../shared/data is not present")
    odd = tmp_path_factory.mktemp("odd") / "odd_results.json"
    odd.write_text(json.dumps(ODD_RECORDS), encoding="utf-8")
    files = [*XSUM_FILES, odd]
    out = tmp_path_factory.mktemp("xsum") / "data"
    assert main(["import", "self-recognition", *map(str, files), "--out", str(out)]) == 0
    return build(out, tmp_path_factory.mktemp("xsum_db") / "xsum.duckdb"), files


def test_importer_maps_both_orders(tmp_path: Path) -> None:
    path = tmp_path / "j_results.json"
    path.write_text(json.dumps(ODD_RECORDS[:1]), encoding="utf-8")
    rows, unknown = pairwise_rows(path)
    assert [r[:6] for r in rows] == [
        ["j", "a1", "j", "gpt4", "1", "1"],
        ["j", "a1", "gpt4", "j", "2", "1"],
    ]
    assert unknown == 0
    path.write_text(
        json.dumps([{"key": "k", "model": "human", "forward_comparison": "2"}]), encoding="utf-8"
    )
    rows, unknown = pairwise_rows(path)
    assert [(r[2], r[3], r[4], r[6]) for r in rows] == [
        ("j", "human", "2", "forward"),
        ("human", "j", "", "backward"),
    ]
    assert unknown == 1
    assert judge_from_file_name("llama_results.json") == "llama"
    with pytest.raises(ValueError, match="_results"):
        judge_from_file_name("results.json")


@needs_xsum
def test_builds_green_with_zero_ratings(xsum) -> None:
    result, _ = xsum
    assert result.validation.success
    assert result.bi_path is not None and Path(result.bi_path).exists()
    counts = query(result.db_path, "select * from input_row_counts").set_index("source")
    assert counts.loc["judge_ratings", "rows_read"] == 0
    # the two empty ratings tables warn, and say why (session 20's new user)
    row_counts = [
        (f.table, f.note)
        for f in result.validation.warnings
        if f.expectation == "expect_table_row_count_to_be_between"
    ]
    note = (
        f"no pointwise judge ratings in this folder (judge_ratings has no rows; "
        f"pairwise_judgments: {counts.loc['pairwise_judgments', 'rows_read']:,} rows): "
        "the ratings marts are empty by design"
    )
    assert row_counts == [("base_inputs__judge_ratings", note), ("fct_judge_ratings", note)]
    assert (counts["rows_read"] == counts["rows_accepted"] + counts["rows_rejected"]).all()
    for mart in ("fct_judge_ratings", "bias_estimates", "agreement_judge_human"):
        assert query(result.db_path, f"select count(*) as n from {mart}")["n"].iloc[0] == 0
    con = duckdb.connect(str(result.bi_path), read_only=True)
    try:
        cols = {r[0] for r in con.execute("describe agreement_counterfactual").fetchall()}
    finally:
        con.close()
    assert {"judge", "alpha_observed", "alpha_calibrated_ci_high"} <= cols


@needs_xsum
def test_every_record_gives_two_rows_accepted_or_rejected(xsum) -> None:
    result, files = xsum
    got = query(
        result.db_path,
        "select judge_alias, count(*) as n, count(reject_code) as rejected "
        "from int_pairwise_checked group by judge_alias",
    ).set_index("judge_alias")
    for path in files:
        judge = judge_from_file_name(path)
        n_records = len(json.loads(path.read_text(encoding="utf-8")))
        assert got.loc[judge, "n"] == 2 * n_records
    for path in XSUM_FILES:
        assert got.loc[judge_from_file_name(path), "n"] == 8000
    # the odd file: "", "3", null and a missing field are rejected with a reason;
    # the number 2 and " 1 " are read as second and first
    rej = query(
        result.db_path,
        "select r.reason_code, r.reason from rejected_rows as r "
        "where r.source = 'pairwise_judgments' order by r.row_number",
    )
    assert got.loc["odd", "rejected"] == len(rej) == 4
    assert sorted(rej["reason_code"]) == ["invalid_value"] + ["missing_value"] * 3
    assert rej["reason"].str.contains("verdict").all()


@needs_xsum
@pytest.mark.parametrize("path", XSUM_FILES, ids=lambda p: p.name)
def test_pairwise_inputs_equal_an_independent_count(xsum, path: Path) -> None:
    result, _ = xsum
    expected = independent_counts(path)
    got = query(result.db_path, WAREHOUSE_COUNTS).set_index("judge").loc[expected["judge"]]
    assert got["pairs_both_orders"] == expected["pairs_both_orders"]
    for name in ("position_consistency", "first_slot_share", "self_preference_share"):
        assert got[name] == pytest.approx(expected[name], abs=1e-12), name


def test_independent_count_on_a_hand_checked_file(tmp_path: Path) -> None:
    path = tmp_path / "j_results.json"
    path.write_text(json.dumps(ODD_RECORDS), encoding="utf-8")
    got = independent_counts(path)
    # valid verdicts: a1/gpt4 1,2; a1/human -,1; a2/human -,2; a3 2,1 -> 6 verdicts
    # first slot: 1, 1, 1 -> 3/6; own chosen: fwd 1, bwd 2 (a1/gpt4 both; a2/human bwd 2) -> 3/6
    # pairs in both orders: a1/gpt4 (own, own: consistent), a3 (other, other: consistent)
    assert got == {
        "judge": "j",
        "rows": 10,
        "pairs_both_orders": 2,
        "position_consistency": 1.0,
        "first_slot_share": 0.5,
        "self_preference_share": 0.5,
    }


# Records in the schema of the authors' results files (ArjunPanickssery/self_recognition,
# results/cnn/gpt35_results.json: CNN/DailyMail keys are SHA-1 hex digests and the
# records carry the chosen answers' probabilities; results/xsum/*: XSUM keys are
# numbers); values shortened.
def _record(key: str, other: str, forward: object, backward: object) -> dict:
    return {
        "key": key, "model": other, "forward_detection": "1",
        "forward_detection_probability": 0.55, "backward_detection": "2",
        "detection_score": 0.6, "forward_comparison": forward,
        "forward_comparison_probability": 0.57, "backward_comparison": backward,
        "backward_comparison_probability": 0.87, "self_preference": 0.72,
    }  # fmt: skip


CNN_KEY = "42c027e4ff9730fbb3de84c1af0d2c506e41c3e4"
CNN_KEY2 = "ee8871b15c50d0db17b0179a6d2beab35065f1e9"
RESULT_FILES = {
    # results/cnn/gpt35_results.json, renamed as in the issue
    "renamed/self_recognition_cnn_gpt35_results.json": [
        _record(CNN_KEY, "human", "1", "2"),
        _record(CNN_KEY, "claude", "2", "1"),
        _record(CNN_KEY2, "gpt4", "1", ""),  # an empty comparison: rejected
    ],
    # results/xsum/cnn_10_ft_gpt35_results.json: gpt35 fine-tuned on 10 CNN
    # examples, judging XSUM articles; its own summaries are gpt35's
    "results/xsum/cnn_10_ft_gpt35_results.json": [
        _record("35232142", "human", "1", "2"),
        _record("35232142", "llama", "2", "2"),
    ],
}


@pytest.fixture(scope="module")
def results_files(tmp_path_factory: pytest.TempPathFactory):
    from tests.importing import import_and_build

    root = tmp_path_factory.mktemp("self_recognition_files")
    paths = []
    for name, records in RESULT_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records), encoding="utf-8")
        paths.append(path)
    (root / "models.csv").write_text("alias,model,family\nclaude,claude-2,Claude\n")
    out, result = import_and_build(
        "self-recognition", paths, tmp_path_factory, "--models", str(root / "models.csv")
    )
    return out, result


def test_judge_and_dataset_from_the_records_and_names() -> None:
    from judge_bias.inputs.importers.self_recognition import authors_from_file_name, dataset_of

    assert authors_from_file_name("self_recognition_cnn_gpt35_results.json") == ("gpt35", "gpt35")
    assert authors_from_file_name("results/cnn/gpt4_results.json") == ("gpt4", "gpt4")
    assert authors_from_file_name("xsum_always_1_ft_llama_results.json") == (
        "xsum_always_1_ft_llama",
        "llama",
    )
    assert authors_from_file_name("mistral_results.json") == ("mistral", "mistral")
    assert dataset_of(CNN_KEY, "unknown") == "cnn"
    assert dataset_of("35232142", "cnn") == "xsum"
    assert dataset_of("a1", "cnn") == "cnn"


def test_result_files_build_with_every_row_accepted_or_rejected(results_files) -> None:
    from tests.importing import assert_reconciled

    out, result = results_files
    n_records = sum(len(r) for r in RESULT_FILES.values())
    n_bad = sum(
        str(r[f]).strip() not in ("1", "2")
        for records in RESULT_FILES.values()
        for r in records
        for f in ("forward_comparison", "backward_comparison")
    )
    counts = assert_reconciled(out, result)
    assert counts["pairwise_judgments"] == (2 * n_records, n_bad) == (10, 1)
    rejected = query(result.db_path, "select reason from rejected_rows")
    assert rejected["reason"].tolist() == ["verdict is empty"]
    # the renamed file's judge is gpt35 and one side of each of its pairs is its
    # own summary; the fine-tune judges gpt35's summaries: same family, not self
    pairs = query(
        result.db_path,
        "select judge_alias, any_value(judge_family) as family, count(*) as n, "
        "count(*) filter (where is_self_first or is_self_second) as n_self "
        "from int_pairwise_checked where reject_code is null group by judge_alias",
    ).set_index("judge_alias")
    assert pairs.loc["gpt35"].tolist() == ["GPT", 5, 5]
    assert pairs.loc["cnn_10_ft_gpt35"].tolist() == ["GPT", 4, 0]


def test_families_and_datasets_come_out_right(results_files) -> None:
    out, _ = results_files
    with (out / "models.csv").open(newline="", encoding="utf-8") as fh:
        models = {r["alias"]: (r["model"], r["family"]) for r in csv.DictReader(fh)}
    assert models["gpt35"] == ("gpt35", "GPT")
    assert models["cnn_10_ft_gpt35"] == ("cnn_10_ft_gpt35", "GPT")  # its base's family
    assert models["claude"] == ("claude-2", "Claude")  # --models
    assert "self_recognition_cnn_gpt35" not in models
    with (out / "prompts.csv").open(newline="", encoding="utf-8") as fh:
        datasets = {r["prompt_id"]: r["dataset"] for r in csv.DictReader(fh)}
    assert datasets == {CNN_KEY: "cnn", CNN_KEY2: "cnn", "35232142": "xsum"}


def test_an_individual_recognition_file_is_named_not_rejected_row_by_row(tmp_path: Path) -> None:
    """The repository's individual_setting_results/recognition_results/cnn/*.json hold
    one summary per record (target_model, recognition_score): no comparison. The
    import says so instead of writing two rows per record for the build to reject."""
    from judge_bias.errors import InputError

    records = [
        {"key": "06352019a19ae31e527f37f7571c6dd7f0c5da37", "model": "cnn_2_ft_gpt35",
         "target_model": target, "recognition_score": 0.95, "res": {"Yes": 0.95, "No": 0.05},
         "ground_truth": int(target == "gpt35")}
        for target in ("human", "claude", "gpt35")
    ]  # fmt: skip
    path = tmp_path / "cnn_2_ft_gpt35_results.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(InputError, match="no record has forward_comparison.*target_model"):
        pairwise_rows(path)
    # a folder mixing both kinds: the message says what to do with this file
    with pytest.raises(InputError, match="leave it out of the import"):
        pairwise_rows(path)
    # one record with either field makes it a comparison file: the rest are rejected rows
    path.write_text(
        json.dumps([*records, {"key": "k", "model": "human", "backward_comparison": "1"}])
    )
    rows, unknown = pairwise_rows(path)
    assert (len(rows), unknown) == (2 * (len(records) + 1), 2 * len(records) + 1)
