"""Broken inputs: every bad row lands in rejected_rows with its reason, or the
build stops with an error naming the file and column; counts always reconcile."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from judge_bias.errors import InputError
from judge_bias.warehouse.build import BuildResult, build
from tests.conftest import query

pytestmark = pytest.mark.dbt

EVIL = 'evil"; drop table fct_judge_ratings; --'
ODD = "odd 'model'; select 1; --"
AL, BP = "aurora/large-2025-01", "borealis-pro-v1"

# (row to append, expected reason_code or None when the row must be accepted)
RATINGS: list[tuple[list[str], str | None]] = [
    (
        ["aurora-large", "news_0000", "borealis-pro", "correctness", "Kinda correct", "", "", "2"],
        "unknown_label",
    ),
    (
        ["aurora-large", "news_0000", "mystery-model", "correctness", "Correct", "", "", "2"],
        "unknown_model",
    ),
    ([EVIL, "news_0000", "borealis-pro", "correctness", "Correct", "", "", "2"], "unknown_model"),
    (
        ["aurora-large", "news_0000", "borealis-pro", "verbosity", "Correct", "", "", "2"],
        "unknown_dimension",
    ),
    # a model and a dimension named `all` (rejected in models and rating_scales below):
    # their ratings are rejected, not pooled with the marts' `all` rows
    (
        ["aurora-large", "news_0000", "all-alias", "correctness", "Correct", "", "", "2"],
        "unknown_model",
    ),
    (
        ["aurora-large", "news_0000", "borealis-pro", "All", "Good", "", "", "2"],
        "unknown_dimension",
    ),
    (
        ["aurora-large", "news_0000", "borealis-pro", "correctness", "9", "", "", "2"],
        "score_out_of_range",
    ),
    (
        ["aurora-large", "news_0000", "borealis-pro", "helpfulness", "1e999", "", "", "2"],
        "score_out_of_range",
    ),
    (
        ["aurora-large", "news_0000", "borealis-pro", "correctness", "abc", "", "", "3"],
        "unknown_label",
    ),
    # numbers that are no score: NaN and -infinity
    (
        ["aurora-large", "news_0000", "borealis-pro", "helpfulness", "NaN", "", "", "5"],
        "score_out_of_range",
    ),
    (
        ["aurora-large", "news_0000", "borealis-pro", "correctness", "-inf", "", "", "5"],
        "score_out_of_range",
    ),
    (["aurora-large", "", "borealis-pro", "correctness", "Correct", "", "", "2"], "missing_value"),
    (
        ["aurora-large", "news_0000", "borealis-pro", "correctness", "", "", "", "4"],
        "missing_value",
    ),
    (
        [
            "aurora-large",
            "news_0000",
            "borealis-pro",
            "faithfulness",
            "",
            "I think it is fine.",
            "",
            "2",
        ],
        "unparseable_raw_output",
    ),
    (
        ["aurora-large", "news_0000", "borealis-pro", "faithfulness", "Yes", "", "sideways", "2"],
        "invalid_value",
    ),
    (
        ["aurora-large", "nope_9999", "borealis-pro", "correctness", "Correct", "", "", "2"],
        "unknown_prompt",
    ),
    # accepted: case and whitespace, markdown answer, N/A, odd names, numbers in scale
    (
        [
            "aurora-large",
            "news_0000",
            "borealis-pro",
            "faithfulness",
            "  generally YES ",
            "",
            "",
            "2",
        ],
        None,
    ),
    (
        [
            "aurora-large",
            "news_0000",
            "borealis-pro",
            "helpfulness",
            "",
            'Explanation: "quoted", with\na newline.\n**Answer:** Very helpful.',
            "",
            "2",
        ],
        None,
    ),
    (["aurora-large", "news_0000", "cirrus-max", "faithfulness", "N/A", "", "", "2"], None),
    (["aurora-large", "news_0000", ODD, "correctness", "2", "", "", "2"], None),
    (["aurora-large", "news_0002", "cirrus-max", "Correctness ", "3", "", "inverted", "2"], None),
]
HUMANS = [
    (
        ["news_0000", "aurora/large-2025-01", "correctness", "ann_9", "Mostly right", "", ""],
        "unknown_label",
    ),
    (["news_0000", "nobody", "correctness", "ann_9", "Correct", "", ""], "unknown_model"),
    (
        ["news_0000", "aurora/large-2025-01", "correctness", "ann_1", "Correct", "", ""],
        "duplicate_key",
    ),
    (
        ["news_0000", "aurora/large-2025-01", "helpfulness", "ann_9", "0", "", ""],
        "score_out_of_range",
    ),
    (["news_0000", "aurora/large-2025-01", "helpfulness", "ann_8", "3", "", "x"], "invalid_value"),
    (
        ["news_0000", "aurora/large-2025-01", "helpfulness", "ann_7", "3", "boss", ""],
        "invalid_value",
    ),
    # n_aggregated (7th): absurd, not whole; labels NaN and -inf
    (["news_0000", AL, "helpfulness", "ann_6", "3", "", "1e308"], "invalid_value"),
    (["news_0000", AL, "helpfulness", "ann_5", "3", "", "2.5"], "invalid_value"),
    (["news_0000", AL, "faithfulness", "ann_4", "NaN", "", ""], "score_out_of_range"),
    (["news_0000", AL, "correctness", "ann_4", "-inf", "", ""], "score_out_of_range"),
    # accepted: a whole n_aggregated written as a decimal
    (["news_0002", AL, "helpfulness", "ann_6", "3", "", "2.0"], None),
    # no prompt_id: rejected, so int_annotator_label_counts never has a null prompt key
    (["", AL, "correctness", "ann_3", "Correct", "", ""], "missing_value"),
]
COMPLETIONS = [
    (["news_0000", "aurora/large-2025-01", "again", ""], "duplicate_key"),
    (["news_0002", "unknown-gen", "text", ""], "unknown_model"),
    (["news_0002", ODD, "", "-5"], "invalid_value"),
    # length_tokens above max_count (1e9), NaN, infinite
    (["news_0003", ODD, "", "1e308"], "invalid_value"),
    (["news_0004", ODD, "", "nan"], "invalid_value"),
    (["news_0005", ODD, "", "inf"], "invalid_value"),
    # accepted: the largest length max_count allows
    (["news_0006", ODD, "", "1000000000"], None),
]
PROMPTS = [(["news_0000", "news", "summarization", "dup"], "duplicate_key")]
MODELS = [
    (["x-alias", "x-model", ""], "missing_value"),
    ([ODD, ODD, "Odd"], None),
    (["all-alias", " ALL ", "Odd"], "invalid_value"),  # `all` names the pooled rows
    (["all", "aurora-large", "Aurora"], None),  # an alias `all` of another model is fine
]
SCALES = [
    (["helpfulness", "Superb", "high", "false"], "invalid_value"),
    # scores outside score_range ([-1e6, 1e6]) would make a scale's span overflow
    (["helpfulness", "Astronomical", "1e300", "false"], "score_out_of_range"),
    (["helpfulness", "Abysmal", "-1000001", "false"], "score_out_of_range"),
    # a dimension named `all`: the pooled rows' label
    (["all", "Good", "1", "false"], "invalid_value"),
    (["all", "Bad", "0", "false"], "invalid_value"),
]
# judge, prompt_id, model_first, model_second, verdict, human_verdict, p_first,
# perplexity_first, perplexity_second, run_id
PAIRWISE = [
    ([AL, "news_0000", AL, BP, "maybe", "", "", "", "", "2"], "invalid_value"),
    ([AL, "news_0001", AL, BP, "0", "", "", "", "", "2"], "invalid_value"),
    ([AL, "news_0000", AL, "aurora-large", "first", "", "", "", "", "2"], "invalid_value"),
    ([AL, "news_0002", AL, BP, "first", "", "1.5", "", "", "2"], "invalid_value"),
    (["nobody-judge", "news_0000", AL, BP, "first", "", "", "", "", "2"], "unknown_model"),
    ([AL, "news_0003", AL, "mystery-model", "first", "", "", "", "", "2"], "unknown_model"),
    ([AL, "news_0004", AL, BP, "first", "3", "", "", "", "2"], "invalid_value"),
    ([AL, "news_0005", AL, BP, "first", "", "", "-2", "", "2"], "invalid_value"),
    ([AL, "news_0006", AL, BP, "", "", "", "", "", "2"], "missing_value"),
    ([AL, "nope_9999", AL, BP, "first", "", "", "", "", "2"], "unknown_prompt"),
    # p_first and perplexities that are not finite, or a perplexity of 0
    ([AL, "news_0007", AL, BP, "first", "", "NaN", "", "", "2"], "invalid_value"),
    ([AL, "news_0008", AL, BP, "first", "", "inf", "", "", "2"], "invalid_value"),
    ([AL, "news_0009", AL, BP, "first", "", "", "inf", "", "2"], "invalid_value"),
    ([AL, "news_0010", AL, BP, "first", "", "", "3", "nan", "2"], "invalid_value"),
    ([AL, "news_0011", AL, BP, "first", "", "", "0", "3", "2"], "invalid_value"),
    # an unparseable verdict and another problem: rejected, not kept as `invalid`
    (["nobody-judge", "news_0002", AL, BP, "maybe", "", "", "", "", "2"], "invalid_value"),
    ([AL, "news_0004", AL, BP, "maybe", "", "1.5", "", "", "2"], "invalid_value"),
    # accepted: both orders of one pair (B, then [[A]]), a tie, human "draw", p_first 0
    ([AL, "news_0000", AL, BP, " **B** ", "draw", "0", "", "", "3"], None),
    ([AL, "news_0000", BP, AL, "[[A]]", "Second", "", "", "", "3"], None),
    ([AL, "news_0002", AL, BP, "Tie", "", "", "12.5", "3", "3"], None),
]
# judge, item_id, bias_type, condition, verdict, score, ground_truth, run_id
PERTURBATION = [
    ([AL, "x_001", "position", "original", "", "", "A", "2"], "missing_value"),
    ([AL, "x_001", "position", "sideways", "A", "", "A", "2"], "invalid_value"),
    (["nobody-judge", "x_001", "position", "original", "A", "", "A", "2"], "unknown_model"),
    ([AL, "x_002", "self-enhancement", "original", "", "abc", "", "2"], "invalid_value"),
    ([AL, "x_003", "self-enhancement", "original", "", "5", "A", "2"], "invalid_value"),
    ([AL, "x_004", "", "original", "A", "", "", "2"], "missing_value"),
    # scores: outside score_range ([-1e6, 1e6]), not finite; numeric ground truths too
    ([AL, "x_006", "self-enhancement", "original", "", "1e308", "", "2"], "score_out_of_range"),
    ([AL, "x_007", "self-enhancement", "perturbed", "", "-2000000", "", "2"], "score_out_of_range"),
    ([AL, "x_008", "self-enhancement", "original", "", "nan", "", "2"], "invalid_value"),
    ([AL, "x_009", "self-enhancement", "original", "", "-inf", "", "2"], "invalid_value"),
    ([AL, "x_010", "self-enhancement", "original", "", "5", "1e300", "2"], "score_out_of_range"),
    ([AL, "x_011", "self-enhancement", "original", "", "5", "nan", "2"], "score_out_of_range"),
    # accepted: the ends of score_range
    ([AL, "x_012", "self-enhancement", "original", "", "-1000000", "", "4"], None),
    ([AL, "x_013", "self-enhancement", "perturbed", "", "1e6", "", "4"], None),
    # accepted: case and whitespace in condition, verdict and bias_type
    ([AL, "x_005", " Position ", "Perturbed ", " A ", "", " a", "3"], None),
]


def _append(path: Path, rows: list[tuple[list[str], str | None]], header: list[str]) -> list:
    """Append rows (padded to the header) and return (row_number, code) pairs."""
    with path.open(encoding="utf-8") as fh:
        n_existing = sum(1 for _ in csv.reader(fh)) - 1
    with path.open("a", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        for values, _ in rows:
            writer.writerow(values + [""] * (len(header) - len(values)))
    return [(n_existing + i + 1, code) for i, (_, code) in enumerate(rows)]


def build_broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuildResult, set, Path]:
    """The `broken` session fixture (tests/conftest.py; test_scorecard reads it too):
    the demo with the rows above appended, built; (result, expected rejections, data)."""
    import shutil

    from tests.conftest import DEMO_DIR

    # a folder name with a quote and a semicolon: paths never become SQL
    data = tmp_path_factory.mktemp("broken") / "data 'x'; drop table y; --"
    shutil.copytree(DEMO_DIR, data)
    expected: set[tuple[str, int, str]] = set()
    plan = {
        "judge_ratings": RATINGS,
        "human_annotations": HUMANS,
        "completions": COMPLETIONS,
        "prompts": PROMPTS,
        "models": MODELS,
        "rating_scales": SCALES,
        "pairwise_judgments": PAIRWISE,
        "perturbation_judgments": PERTURBATION,
    }
    # give two files an optional column the demo does not use
    for source, column in (("completions", "length_tokens"), ("human_annotations", "n_aggregated")):
        with (data / f"{source}.csv").open(newline="", encoding="utf-8") as fh:
            table = list(csv.reader(fh))
        with (data / f"{source}.csv").open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerows(
                [table[0] + [column]] + [row + [""] for row in table[1:]]
            )
    for source, rows in plan.items():
        path = data / f"{source}.csv"
        header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
        for row_number, code in _append(path, rows, header):
            if code:
                expected.add((source, row_number, code))
    ratings = data / "judge_ratings.csv"
    # an exact copy of data row 1, a record with too many fields, and a BOM
    lines = ratings.read_text(encoding="utf-8").split("\n")
    n = sum(1 for _ in csv.reader(ratings.open(encoding="utf-8"))) - 1
    text = "\ufeff" + "\n".join(lines).rstrip("\n") + "\n" + lines[1] + "\n" + "a,b,c,d,e,f,g,h,i\n"
    ratings.write_text(text, encoding="utf-8")
    expected |= {
        ("judge_ratings", n + 1, "duplicate_key"),
        ("judge_ratings", n + 2, "malformed_row"),
    }
    # an exact copy of data row 1 of the pairwise and perturbation files
    for source in ("pairwise_judgments", "perturbation_judgments"):
        path = data / f"{source}.csv"
        with path.open(newline="", encoding="utf-8") as fh:
            table = list(csv.reader(fh))
        with path.open("a", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerow(table[1])
        expected.add((source, len(table), "duplicate_key"))
    # the rating scale row rejected above ('Superb') makes nothing else fail
    result = build(data, tmp_path_factory.mktemp("broken_db") / "broken.duckdb")
    return result, expected, data


def test_every_bad_row_is_rejected_with_its_reason(broken) -> None:
    result, expected, _ = broken
    got = query(result.db_path, "select source, row_number, reason_code from rejected_rows")
    assert set(map(tuple, got.itertuples(index=False))) == expected
    assert len(got) == len(expected)


def test_counts_reconcile(broken) -> None:
    result, expected, data = broken
    counts = query(result.db_path, "select * from input_row_counts").set_index("source")
    assert (counts["rows_read"] == counts["rows_accepted"] + counts["rows_rejected"]).all()
    for source in counts.index:
        with (data / f"{source}.csv").open(encoding="utf-8-sig") as fh:
            assert counts.loc[source, "rows_read"] == sum(1 for _ in csv.reader(fh)) - 1
        assert counts.loc[source, "rows_rejected"] == sum(e[0] == source for e in expected)
    assert result.validation.success  # rejected rows are reported, not build failures


def test_reasons_name_the_value_and_raw_values_keep_the_row(broken) -> None:
    result, _, _ = broken
    rej = query(result.db_path, "select * from rejected_rows")
    evil = rej[rej["reason"].str.contains("drop table", regex=False)]
    assert len(evil) == 1
    assert json.loads(evil["raw_values"].iloc[0])["judge"] == EVIL
    dup = rej[(rej["source"] == "judge_ratings") & (rej["reason_code"] == "duplicate_key")]
    assert dup["reason"].iloc[0].endswith("as row 1")
    label = rej[rej["reason"].str.contains("Kinda correct")]["reason"].iloc[0]
    assert "correctness" in label and "Partially correct" in label
    bad = rej[rej["reason_code"] == "malformed_row"]
    assert json.loads(bad["raw_values"].iloc[0]) == "a,b,c,d,e,f,g,h,i"
    reserved = rej[rej["reason"].str.contains("is reserved", regex=False)]
    # the rows of the model and dimension (models, rating_scales) and a rating naming
    # the dimension `All`, whose reason says why it has no scale
    want = ["judge_ratings", "models", "rating_scales", "rating_scales"]
    assert sorted(reserved["source"]) == want
    assert (
        "model 'ALL' is reserved: the marts label the rows pooling every model 'all'; "
        + ("rename it")
        in reserved["reason"].tolist()
    )


def test_tricky_but_valid_rows_are_accepted(broken) -> None:
    result, _, _ = broken
    fct = query(result.db_path, "select * from fct_judge_ratings where run_id = '2'")
    by = {(r.model, r.dimension): r for r in fct.itertuples()}
    assert by[("borealis-pro", "faithfulness")].judge_score == 5  # "  generally YES "
    assert by[("borealis-pro", "helpfulness")].judge_score == 4  # **Answer:** Very helpful.
    assert by[("cirrus-max", "faithfulness")].is_na_label  # N/A
    odd = by[(ODD, "correctness")]
    assert odd.model_family == "Odd" and odd.judge_score == 2
    inverted = by[("cirrus-max", "correctness")]  # "3" under the inverted frame on 1..3
    assert inverted.judge_score == 1 and inverted.framing == "inverted"
    assert len(fct) == 5


def test_range_reasons_name_the_bounds_and_the_var(broken) -> None:
    result, _, _ = broken
    rej = query(result.db_path, "select * from rejected_rows").set_index(["source", "reason_code"])
    out = rej.loc[("perturbation_judgments", "score_out_of_range"), "reason"].tolist()
    assert (
        "score '1e308' is outside the score range [-1000000, 1000000] (dbt var score_range)" in out
    )
    assert any(r.startswith("ground_truth 'nan' is outside the score range") for r in out)
    scales = rej.loc[("rating_scales", "score_out_of_range"), "reason"].tolist()
    assert (
        "score '1e300' is outside the score range [-1000000, 1000000] (dbt var score_range)"
        in scales
    )
    counts = rej.loc[("completions", "invalid_value"), "reason"].tolist()
    assert (
        "length_tokens '1e308' is not a number between 0 and 1000000000 (dbt var max_count)"
        in counts
    )
    humans = rej.loc[("human_annotations", "invalid_value"), "reason"].tolist()
    assert (
        "n_aggregated '2.5' is not a whole number between 1 and 1000000000 (dbt var max_count)"
        in humans
    )
    # the accepted rows at the ends of the ranges keep their values
    pt = query(
        result.db_path, "select condition, score from int_perturbation_checked where run_id = '4'"
    )
    assert sorted(pt["score"]) == [-1e6, 1e6]
    accepted = "from int_human_annotations_checked where reject_code is null"
    n_agg = query(result.db_path, f"select n_aggregated {accepted} and annotator_id = 'ann_6'")
    assert n_agg["n_aggregated"].tolist() == [2]


def test_validation_warns_about_bad_pairwise_and_perturbation_values(broken) -> None:
    result, _, _ = broken
    warned = {(f.table, f.column) for f in result.validation.warnings}
    assert {
        ("base_inputs__pairwise_judgments", "verdict"),
        ("base_inputs__pairwise_judgments", "human_verdict"),
        ("base_inputs__pairwise_judgments", "p_first"),
        ("base_inputs__pairwise_judgments", "perplexity_first"),
        ("base_inputs__perturbation_judgments", "condition"),
        ("base_inputs__perturbation_judgments", "score"),
    } <= warned


def test_tricky_but_valid_pairwise_and_perturbation_rows(broken) -> None:
    result, _, _ = broken
    pw = query(
        result.db_path,
        "select * from int_pairwise_checked where run_id = '3' order by row_number",
    )
    assert pw["reject_code"].isna().all()
    assert list(pw["verdict"]) == ["second", "first", "tie"]
    assert list(pw["human_verdict"].fillna("")) == ["tie", "second", ""]
    assert list(pw["has_swapped"]) == [True, True, False]
    assert pw["pair_key"].iloc[0] == pw["pair_key"].iloc[1] != pw["pair_key"].iloc[2]
    assert pw["p_first"].iloc[0] == 0.0 and pw["perplexity_second"].iloc[2] == 3.0
    assert list(pw["is_self_first"]) == [True, False, True]
    dup = query(
        result.db_path,
        "select reason from rejected_rows where source = 'pairwise_judgments' "
        "and reason_code = 'duplicate_key'",
    )
    assert dup["reason"].iloc[0].endswith("as row 1")
    pt = query(result.db_path, "select * from int_perturbation_checked where run_id = '3'")
    assert pt[["bias_type", "condition", "verdict", "ground_truth"]].values.tolist() == [
        ["position", "perturbed", "a", "a"]
    ]
    assert pt["reject_code"].isna().all()


@pytest.mark.parametrize(
    ("filename", "content", "message"),
    [
        (
            "judge_ratings.csv",
            "judge,prompt_id,dimension,label\nj,p,d,1\n",
            "judge_ratings.csv: missing required column(s) 'model'",
        ),
        ("judge_ratings.csv", "", "judge_ratings.csv: the file is empty"),
        (
            "human_annotations.csv",
            "prompt_id,model,dimension,label\np,m,d,1\n",
            "human_annotations.csv: missing required column(s) 'annotator_id'",
        ),
    ],
)
def test_file_level_errors_stop_the_build_naming_file_and_column(
    tmp_path: Path, demo_copy: Path, filename, content, message
) -> None:
    (demo_copy / filename).write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as error:  # an input error (exit 2), found before or in dbt
        build(demo_copy, tmp_path / "w.duckdb")
    assert message in str(error.value)


def test_only_a_verdict_problem_is_kept_as_invalid(broken) -> None:
    """A row rejected for its verdict alone ('maybe') stays a rejected row and is
    kept by pairwise_bias as `invalid`; a bad verdict beside an unknown judge, a bad
    p_first or an unknown prompt (the '0' row) is not."""
    result, _, _ = broken
    kept = query(
        result.db_path,
        "select prompt_id, verdict_input from int_pairwise_checked "
        "where kept_as_invalid order by prompt_id",
    )
    assert list(map(tuple, kept.itertuples(index=False))) == [
        ("news_0000", "maybe"),
    ]
    assert query(
        result.db_path, "select count(*) as n from int_pairwise_checked "
        "where kept_as_invalid and reject_code is null",
    )["n"].iloc[0] == 0  # fmt: skip
    got = query(result.db_path, "select * from pairwise_bias where opponent = 'all'")
    assert got.set_index("judge").loc["aurora-large", "n_invalid"] == 1
    assert got["n_invalid"].sum() == 1
