"""The publishing gates and the per-file summary, on hand-made count tables
(no dbt): which files fail or warn, what the summary says, the report's note."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from judge_bias.inputs.contract import REASON_CODES
from judge_bias.inputs.summary import (
    FIXES,
    format_summary,
    gate_failures,
    input_note,
    read_input_counts,
)
from judge_bias.warehouse.expectations import CRITICAL, WARNING
from judge_bias.warehouse.validation import validate

# source, file, read, accepted, rejected (warn 0.01, max 0.5 as the dbt vars' defaults)
COUNTS = [
    ("judge_ratings", None, 0, 0, 0),  # header only (pairwise-only data): fine
    ("pairwise_judgments", "/d/pairwise_judgments.csv", 40, 0, 40),  # all rejected
    ("perturbation_judgments", "/d/perturbation_judgments.parquet", 10, 3, 7),  # 70%
    ("prompts", "/d/prompts.csv", 123, 120, 3),  # 2.4%: a warning
    ("models", "/d/models.csv", 7, 7, 0),
    ("rating_scales", None, 0, 0, 0),  # absent
]


def _rejected() -> list[tuple[str, int, str, str]]:
    rows = [
        ("pairwise_judgments", i, "invalid_value", f"verdict '{v}' is not first, second or tie")
        for i, v in enumerate(["maybe"] * 30 + ["0"] * 8, start=1)
    ]
    rows += [
        ("pairwise_judgments", 39, "unknown_model", "judge 'x' is not in the models file"),
        ("pairwise_judgments", 40, "unknown_model", "judge 'x' is not in the models file"),
    ]
    rows += [("perturbation_judgments", i, "missing_value", "judge is empty") for i in range(1, 8)]
    rows += [
        ("prompts", 120 + i, "duplicate_key", f"duplicate key: same prompt_id as row {i}")
        for i in range(1, 4)
    ]
    return rows


@pytest.fixture()
def counts_db(tmp_path: Path) -> Path:
    db = tmp_path / "counts.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "create table input_row_counts (source varchar, source_file varchar, rows_read bigint, "
        "rows_accepted bigint, rows_rejected bigint, rows_accounted bigint, "
        "rejected_share double, warn_rejected_share double, max_rejected_share double, "
        "gate_scope varchar, gate_rows_read bigint, gate_rows_accepted bigint, "
        "gate_rows_rejected bigint, gate_rejected_share double)"
    )
    for source, path, read, accepted, rejected in COUNTS:
        share = rejected / read if read else None
        con.execute(
            "insert into input_row_counts values "
            "(?, ?, ?, ?, ?, ?, ?, 0.01, 0.5, 'build', ?, ?, ?, ?)",
            [source, path, read, accepted, rejected, accepted + rejected, share,
             read, accepted, rejected, share],
        )  # fmt: skip
    con.execute(
        "create table rejected_rows (source varchar, row_number bigint, reason_code varchar, "
        "reason varchar)"
    )
    con.executemany("insert into rejected_rows values (?, ?, ?, ?)", _rejected())
    con.close()
    return db


def test_every_reason_code_has_a_fix() -> None:
    assert set(FIXES) == set(REASON_CODES)
    assert all(len(text) > 20 for text in FIXES.values())


def test_gates_fail_all_rejected_and_over_max_and_warn_between(counts_db: Path) -> None:
    con = duckdb.connect(str(counts_db), read_only=True)
    files = {f.source: f for f in read_input_counts(con)}
    con.close()
    assert [s for s, f in files.items() if f.fails] == [
        "pairwise_judgments",
        "perturbation_judgments",
    ]
    assert [s for s, f in files.items() if f.gate and not f.fails] == ["prompts"]
    assert files["judge_ratings"].gate is None  # no rows is not "all rejected"
    lines = gate_failures(list(files.values()))
    assert len(lines) == 2
    assert lines[0].startswith("pairwise_judgments.csv: 40 rows read, all rejected")
    assert "top reason invalid_value (38 rows)" in lines[0] and "'maybe'" in lines[0]
    assert FIXES["invalid_value"] in lines[0]
    assert lines[1].startswith("perturbation_judgments.parquet: 70.0% of its 10 rows rejected")
    assert "max_rejected_share 0.5" in lines[1]


def test_summary_lists_files_reasons_examples_and_fixes(counts_db: Path) -> None:
    con = duckdb.connect(str(counts_db), read_only=True)
    text = format_summary(read_input_counts(con))
    con.close()
    lines = text.splitlines()
    pairwise = lines.index(
        "  pairwise_judgments.csv: 40 read, 0 accepted, 40 rejected (100.0%): FAILED, "
        "40 rows read, all rejected"
    )
    # reasons by count: invalid_value (38, two distinct texts), then unknown_model (2)
    assert lines[pairwise + 1] == (
        "    38 invalid_value: verdict 'maybe' is not first, second or tie (30); "
        "verdict '0' is not first, second or tie (8)"
    )
    assert lines[pairwise + 2] == f"      fix: {FIXES['invalid_value']}"
    assert lines[pairwise + 3].startswith("    2 unknown_model: judge 'x' is not in")
    prompts = next(line for line in lines if line.startswith("  prompts.csv"))
    assert "3 rejected (2.4%): warning" in prompts
    # three texts naming rows 1, 2 and 3 as the earlier row: one line for the file and
    # reason, with the rejected rows' numbers (rejected_rows keeps each exact text)
    duplicates = lines.index(
        "    3 duplicate_key: duplicate key: same prompt_id as an earlier row "
        "(3: rows 121, 122, 123)"
    )
    assert lines[duplicates + 1] == f"      fix: {FIXES['duplicate_key']}"
    assert lines[-1] == "  no rows (absent or header only): judge_ratings, rating_scales"


def test_duplicate_keys_are_one_line_per_file_with_the_first_rows(tmp_path: Path) -> None:
    """Nine duplicate rows of judge_ratings naming six different earlier rows, and two
    of prompts: one duplicate_key line per file (not nine "as row N" texts of count
    1), its count and the first five row numbers of the rejected rows, then "...";
    other codes keep their texts. Fails on the old summary (one text per earlier row)
    (GROUPED_BY_ROW empty)."""
    db = tmp_path / "dups.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "create table input_row_counts as select * from (values "
        "('judge_ratings', '/d/judge_ratings.csv', 100, 90, 10, 100, 0.1, 0.2, 0.5), "
        "('prompts', '/d/prompts.csv', 12, 10, 2, 12, 2 / 12, 0.2, 0.5)) t(source, "
        "source_file, rows_read, rows_accepted, rows_rejected, rows_accounted, "
        "rejected_share, warn_rejected_share, max_rejected_share)"
    )
    con.execute(
        "create table rejected_rows (source varchar, row_number bigint, reason_code varchar, "
        "reason varchar)"
    )
    ratings = [(91 + i, f"duplicate key: same key as row {1 + i % 6}") for i in range(9)]
    rows = [("judge_ratings", r, "duplicate_key", text) for r, text in ratings]
    rows += [("judge_ratings", 100, "missing_value", "judge is empty")]
    rows += [("prompts", 11 + i, "duplicate_key", f"duplicate key: same prompt_id as row {i + 1}")
             for i in range(2)]  # fmt: skip
    con.executemany("insert into rejected_rows values (?, ?, ?, ?)", rows)
    con.close()
    con = duckdb.connect(str(db), read_only=True)
    lines = format_summary(read_input_counts(con)).splitlines()
    con.close()
    assert lines[1:6] == [
        "  judge_ratings.csv: 100 read, 90 accepted, 10 rejected (10.0%)",
        "    9 duplicate_key: duplicate key: same key as an earlier row "
        "(9: rows 91, 92, 93, 94, 95, ...)",
        f"      fix: {FIXES['duplicate_key']}",
        "    1 missing_value: judge is empty (1)",
        f"      fix: {FIXES['missing_value']}",
    ]
    assert (
        "    2 duplicate_key: duplicate key: same prompt_id as an earlier row "
        "(2: rows 11, 12)" in lines
    )
    assert sum("duplicate_key" in line and "fix" not in line for line in lines) == 2


def test_report_note_says_all_rejected_not_absent(counts_db: Path) -> None:
    con = duckdb.connect(str(counts_db), read_only=True)
    try:
        note = input_note(con, "pairwise_judgments")
        assert note is not None and note.startswith("40 pairwise_judgments rows read, all rejected")
        assert "invalid_value" in note and "no pairwise_judgments input" not in note
        assert input_note(con, "rating_scales") == "no rating_scales input"
        assert input_note(con, "prompts") is None
    finally:
        con.close()


def test_validation_suite_gates_on_the_table(counts_db: Path) -> None:
    report = validate(counts_db, ["marts"])
    mine = [f for f in report.findings if f.table == "input_row_counts" and not f.success]
    failed = {f.column: f for f in mine if f.severity == CRITICAL}
    warned = {f.column: f for f in mine if f.severity == WARNING}
    sources = lambda f: {e["source"] for e in f.examples}  # noqa: E731
    assert sources(failed["gate_rejected_share"]) == {"pairwise_judgments"}
    assert sources(failed["max_rejected_share=gate_rejected_share"]) == {
        "pairwise_judgments",
        "perturbation_judgments",
    }
    assert "prompts" in sources(warned["warn_rejected_share=gate_rejected_share"])
    # The thresholds are read from the table (one source: the dbt vars): raise the
    # maximum above 70% and only the all-rejected file fails.
    con = duckdb.connect(str(counts_db))
    con.execute("update input_row_counts set max_rejected_share = 0.8")
    con.close()
    report = validate(counts_db, ["marts"])
    failed = [f for f in report.failures if f.table == "input_row_counts"]
    assert {e["source"] for f in failed for e in f.examples} == {"pairwise_judgments"}


def test_an_incremental_build_gates_on_its_load(counts_db: Path) -> None:
    """The gates judge the gate_* columns (an incremental build's load): a load of 40
    rows, 30 rejected, fails although the accumulated file is 3% rejected; a load
    that passes passes whatever the totals say, and the suite agrees."""
    con = duckdb.connect(str(counts_db))
    con.execute(
        "update input_row_counts set rows_read = 1000, rows_accepted = 970, "
        "rows_rejected = 30, rows_accounted = 1000, rejected_share = 0.03, "
        "gate_scope = 'load L7', gate_rows_read = 40, gate_rows_accepted = 10, "
        "gate_rows_rejected = 30, gate_rejected_share = 0.75 where source = 'prompts'"
    )
    con.execute(
        "update input_row_counts set gate_scope = 'load L7', gate_rows_read = 0, "
        "gate_rows_accepted = 0, gate_rows_rejected = 0, gate_rejected_share = null "
        "where source = 'pairwise_judgments'"
    )
    files = {f.source: f for f in read_input_counts(con)}
    con.close()
    assert files["prompts"].fails
    assert (
        files["prompts"].gate
        == "75.0% of its 40 rows in load L7 rejected, above max_rejected_share 0.5"
    )
    assert not files["pairwise_judgments"].fails  # all 40 rejected, but in earlier loads
    report = validate(counts_db, ["marts"])
    failed = {
        e["source"] for f in report.failures if f.table == "input_row_counts" for e in f.examples
    }
    assert "prompts" in failed and "pairwise_judgments" not in failed


def test_summary_names_every_reason_code_even_one_row(tmp_path: Path) -> None:
    """6 bad rows of 2,526 under five codes (issue 33): the single unknown model is
    named with its count; each code shows at most three example texts."""
    db = tmp_path / "few.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "create table input_row_counts as select 'judge_ratings' as source, "
        "'/d/judge_ratings.csv' as source_file, 2526 as rows_read, 2520 as rows_accepted, "
        "6 as rows_rejected, 2526 as rows_accounted, 6 / 2526 as rejected_share, "
        "0.01 as warn_rejected_share, 0.5 as max_rejected_share"
    )
    con.execute(
        "create table rejected_rows (source varchar, row_number bigint, reason_code varchar, "
        "reason varchar)"
    )
    bad = [
        ("missing_value", "judge is empty"),
        ("missing_value", "model is empty"),
        ("unknown_label", "label 'Mostly' is not in rating_scales for faithfulness"),
        ("invalid_value", "framing 'neutral' is not positive or inverted"),
        ("duplicate_key", "duplicate key: same key as row 3"),
        ("unknown_model", "model 'gpt-9' is not in the models file"),
    ]
    con.executemany(
        "insert into rejected_rows values ('judge_ratings', ?, ?, ?)",
        [(i, code, reason) for i, (code, reason) in enumerate(bad, start=1)],
    )
    con.close()
    con = duckdb.connect(str(db), read_only=True)
    text = format_summary(read_input_counts(con))
    con.close()
    lines = text.splitlines()
    assert lines[1] == "  judge_ratings.csv: 2,526 read, 2,520 accepted, 6 rejected (0.2%)"
    assert lines[2] == "    2 missing_value: judge is empty (1); model is empty (1)"
    shown = [line.split(":")[0].strip() for line in lines[2::2]]
    assert shown == [
        "2 missing_value",
        "1 duplicate_key",
        "1 invalid_value",
        "1 unknown_label",
        "1 unknown_model",
    ]
    assert "    1 unknown_model: model 'gpt-9' is not in the models file (1)" in lines
    assert f"      fix: {FIXES['unknown_model']}" in lines

    # five distinct texts of one code: three shown, the rest counted
    con = duckdb.connect(str(db))
    con.executemany(
        "insert into rejected_rows values ('judge_ratings', ?, 'unknown_model', ?)",
        [(10 + i, f"model 'm{i}' is not in the models file") for i in range(4)],
    )
    con.close()
    con = duckdb.connect(str(db), read_only=True)
    line = next(
        x for x in format_summary(read_input_counts(con)).splitlines() if "unknown_model:" in x
    )
    con.close()
    assert line.count("is not in the models file") == 3
    assert line.endswith("; 2 more distinct reasons")
