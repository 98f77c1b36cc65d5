"""The Great Expectations suites fail loudly, naming table, expectation and rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest

from judge_bias.cli import main
from judge_bias.warehouse.build import BuildResult
from judge_bias.warehouse.provenance import validation_record
from judge_bias.warehouse.validation import ValidationReport, validate
from tests.conftest import query

pytestmark = pytest.mark.dbt


@pytest.fixture()
def corrupted(demo_build: BuildResult, tmp_path: Path) -> Path:
    db = tmp_path / "corrupt.duckdb"
    shutil.copy(demo_build.db_path, db)
    con = duckdb.connect(str(db))
    con.execute(
        "update fct_judge_ratings set judge_score_norm = 1.5 where source_row_number in (1, 2, 3)"
    )
    con.execute("update input_row_counts set rows_read = rows_read + 1 where source = 'models'")
    con.close()
    return db


def test_demo_passes(demo_build: BuildResult) -> None:
    report = demo_build.validation
    assert report.success and not report.failures
    tables = {f.table for f in report.findings}
    assert {"fct_judge_ratings", "input_row_counts", "base_inputs__judge_ratings"} <= tables


def test_failure_names_table_expectation_and_offending_rows(corrupted: Path) -> None:
    report = validate(corrupted)
    assert not report.success
    failed = {(f.table, f.expectation, f.column) for f in report.failures}
    assert failed == {
        ("fct_judge_ratings", "expect_column_values_to_be_between", "judge_score_norm"),
        ("input_row_counts", "expect_column_pair_values_to_be_equal", "rows_read=rows_accounted"),
    }
    between = next(f for f in report.failures if f.table == "fct_judge_ratings")
    assert between.unexpected_count == 3 and between.examples == [1.5, 1.5, 1.5]
    assert "FAILED" in report.summary() and "fct_judge_ratings.judge_score_norm" in report.summary()


def test_cli_validate_exits_non_zero(corrupted: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", "--db", str(corrupted)]) == 1  # README: 1 = validation failed
    assert "fct_judge_ratings.judge_score_norm" in capsys.readouterr().out


def test_large_tables_are_validated_on_a_sample(demo_build, monkeypatch) -> None:
    from judge_bias.warehouse import validation

    monkeypatch.setattr(validation, "MAX_VALIDATED_ROWS", 1000)
    report = validation.validate(demo_build.db_path, ["marts"])
    n_fct = query(demo_build.db_path, "select count(*) as n from fct_judge_ratings")["n"][0]
    assert report.sampled["fct_judge_ratings"] == (1000, n_fct)
    assert report.success
    assert "random sample of 1,000 of its" in report.summary()
    # the validation record says so too (fails when the record drops the field)
    record = validation_record(demo_build.db_path, None, report, None)
    assert record["sampled"] == {"fct_judge_ratings": {"rows_validated": 1000, "rows": n_fct}}
    assert record["scoped_to_load"] == {}


def test_a_large_table_is_read_as_a_reproducible_uniform_sample(
    tmp_path: Path, monkeypatch
) -> None:
    """A table over MAX_VALIDATED_ROWS is read as MAX_VALIDATED_ROWS distinct rows
    drawn by a seeded hash of the row id: the same rows on every read, from the
    whole table (not its first rows); a view (no row ids) as a seeded reservoir
    sample."""
    from judge_bias.warehouse import validation

    monkeypatch.setattr(validation, "MAX_VALIDATED_ROWS", 1000)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("create table t as select i, 'v' || (i * 7919 % 5003) as s from range(20000) r(i)")
    con.execute("create view v as select * from t")
    for table in ("t", "v"):
        df, total = validation._read_table(con, table, {"i", "s"})
        assert total == 20000 and len(df) == 1000 and df["i"].is_unique
        assert (df["s"] == "v" + (df["i"] * 7919 % 5003).astype(str)).all()  # whole rows
        again, _ = validation._read_table(con, table, {"i", "s"})
        assert sorted(again["i"]) == sorted(df["i"])
        # uniform over the table: each fifth holds about 200 of the 1,000 (sd 12.6)
        fifths = np.bincount(df["i"].to_numpy() // 4000, minlength=5)
        assert ((fifths > 150) & (fifths < 250)).all(), fifths
    # an input column named rowid hides DuckDB's row id: constant, repeated or null
    # values must not decide the sample (the review's case: all 20,000 rows came back)
    con.execute("create table r as select i, case when i % 3 = 0 then null else 'a' end as rowid "
                "from range(20000) r(i)")  # fmt: skip
    df, total = validation._read_table(con, "r", {"i", "rowid"})
    assert total == 20000 and len(df) == 1000 and df["i"].is_unique
    con.close()


def test_the_sample_ranks_a_share_of_the_rows_and_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sample's rows (the smallest seeded hashes of the row ids) are ranked among
    the rows below a hash threshold: the same rows as ranking the whole table, also
    on an incremental load's rows (where); when too few pass the threshold (a margin
    under 1), the whole table is ranked (fails with the prefilter alone)."""
    from judge_bias.warehouse import validation

    monkeypatch.setattr(validation, "MAX_VALIDATED_ROWS", 1000)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("create table t as select i, i % 3 as k from range(50000) r(i)")
    for where in (None, "k <> 1"):
        cond = f"where {where}" if where else ""
        expected = con.execute(
            f"select i from t {cond} order by hash(rowid, {validation.SAMPLE_SEED}), rowid "
            "limit 1000"
        ).fetchall()
        for margin in (1.1, 0.5):
            monkeypatch.setattr(validation, "SAMPLE_MARGIN", margin)
            df, total = validation._read_table(con, "t", {"i"}, where=where)
            assert total == (50000 if where is None else 33333)
            assert list(df["i"]) == sorted(i for (i,) in expected), (where, margin)
    con.close()


def test_columns_only_named_are_read_as_nulls(tmp_path: Path) -> None:
    """The input suite names every column of the file (ExpectTableColumnsToMatchSet)
    but reads the values of a few: the others come as nulls, under their names."""
    from judge_bias.warehouse import validation

    table = "base_inputs__judge_ratings"
    cols, every_name = validation._columns_needed(validation.suites()["inputs"][table], table)
    assert every_name and "judge" in cols and "_raw_line" not in cols
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute(f"create table {table} as select 'j' as judge, 'a,b' as _raw_line")
    df, _ = validation._read_table(con, table, cols, every_name)
    assert list(df.columns) == ["judge", "_raw_line"]
    assert df["judge"].tolist() == ["j"] and df["_raw_line"].isna().all()
    df, _ = validation._read_table(con, table, cols)
    assert list(df.columns) == ["judge"]
    con.close()


def _suite_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tables: dict[str, str], suite: dict
) -> Path:
    """A warehouse at tmp_path/w.duckdb holding ``tables`` (name -> select), with the
    one suite 's' (table -> expectations) in place of the project's SUITES."""
    from judge_bias.warehouse import expectations

    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    for name, select in tables.items():
        con.execute(f"create table {name} as {select}")
    con.close()
    monkeypatch.setattr(expectations, "SUITES", {"s": suite})
    return db


def test_missing_offending_values_are_named_not_nan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pandas reads SQL nulls as NaN: a failing not-null check says the values are
    missing (it printed 'e.g. [nan, nan]'); other checks show the real values, a
    null among them as null."""
    import great_expectations.expectations as gxe

    exps = [
        gxe.ExpectColumnValuesToNotBeNull(column="x", severity="critical"),
        gxe.ExpectColumnValuesToNotBeNull(column="s", severity="critical"),
        gxe.ExpectColumnValuesToBeBetween(column="x", min_value=0, max_value=1),
        gxe.ExpectColumnValuesToBeInSet(column="s", value_set=["a"], mostly=1.0),
    ]
    values = "(1, null::double, 'a'), (2, 0.5, null), (3, null, null), (4, 2.0, 'b')"
    table = f"select * from (values {values}) as v(id, x, s)"
    db = _suite_db(tmp_path, monkeypatch, {"t": table}, {"t": exps})
    texts = [f.describe() for f in validate(db, ["s"]).findings]
    assert texts[0].endswith("(2 offending rows); the offending values are missing (null or NaN)")
    assert texts[1].endswith("(2 offending rows); the offending values are missing (null or NaN)")
    assert texts[2].endswith("(1 offending rows); e.g. [2.0]")
    assert texts[3].endswith("; e.g. ['b']")
    assert not any("nan" in t for t in texts)


def test_batches_are_not_fingerprinted_and_the_findings_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Great Expectations' fingerprint of a pandas batch (a hash of every row, a batch
    marker nothing reads) is skipped (gx.FINGERPRINT_BYTES); the findings equal those
    of its default route, which fingerprints (the reference), met and not met alike."""
    import great_expectations.execution_engine.pandas_execution_engine as engine
    import great_expectations.expectations as gxe

    from judge_bias.warehouse import gx as gx_module

    exps = [
        gxe.ExpectColumnValuesToBeBetween(
            column="x", min_value=0, max_value=3, severity="critical"
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="x", min_value=0, max_value=1, severity="critical"
        ),
        gxe.ExpectColumnValuesToNotBeNull(column="s", severity="warning"),
        gxe.ExpectColumnValuesToBeUnique(column="id", severity="critical"),
    ]
    table = (
        "select i as id, i / 1000 as x, "
        "case when i % 7 = 0 then null else 'a' end as s from range(1, 3001) as r(i)"
    )
    db = _suite_db(tmp_path, monkeypatch, {"t": table}, {"t": exps})
    hashed: list[int] = []
    fingerprint = engine.hash_pandas_dataframe

    def counted(df):
        hashed.append(len(df))
        return fingerprint(df)

    monkeypatch.setattr(engine, "hash_pandas_dataframe", counted)
    ours = validate(db, ["s"])
    assert hashed == []
    assert engine.HASH_THRESHOLD == 1e9  # the process's value back after the run
    monkeypatch.setattr(gx_module, "FINGERPRINT_BYTES", 1e9)  # Great Expectations' default
    reference = validate(db, ["s"])
    assert hashed and set(hashed) == {3000}  # the spy sees a fingerprint when there is one
    assert [f.describe() for f in ours.findings] == [f.describe() for f in reference.findings]
    assert ours.findings == reference.findings
    assert [f.success for f in ours.findings] == [True, False, False, True]


def test_tables_share_one_asset_and_each_is_validated_on_its_own_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One dataframe asset for every table (each asset added was a YAML dump of the
    context's config), each table's batch its own dataframe: the same expectation
    passes on one table and fails on the other, with the other's offending rows."""
    import great_expectations.expectations as gxe
    from great_expectations.datasource.fluent.pandas_datasource import PandasDatasource

    exp = {"column": "x", "min_value": 0, "max_value": 1, "severity": "critical"}
    suite = {t: [gxe.ExpectColumnValuesToBeBetween(**exp)] for t in ("a", "b")}
    tables = {
        "a": "select i / 10 as x from range(0, 11) as r(i)",
        "b": "select i / 10 as x from range(0, 13) as r(i)",
    }
    db = _suite_db(tmp_path, monkeypatch, tables, suite)
    added: list[str] = []
    add = PandasDatasource.add_dataframe_asset

    def counted(self, name, *args, **kwargs):
        added.append(name)
        return add(self, name, *args, **kwargs)

    monkeypatch.setattr(PandasDatasource, "add_dataframe_asset", counted)
    findings = validate(db, ["s"]).findings
    assert len(added) == 1
    assert [(f.table, f.success, f.unexpected_count) for f in findings] == [
        ("a", True, None),
        ("b", False, 2),
    ]
    assert sorted(findings[1].examples) == [1.1, 1.2]


def test_the_fingerprint_threshold_is_the_processes_again_after_the_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """review19d: a user's own Great Expectations in the same process keeps its
    fingerprints: HASH_THRESHOLD is FINGERPRINT_BYTES inside no_fingerprints, nested
    or overlapping blocks included, and the value it had before after the last ends."""
    import great_expectations.execution_engine.pandas_execution_engine as engine

    from judge_bias.warehouse.gx import FINGERPRINT_BYTES, no_fingerprints

    monkeypatch.setattr(engine, "HASH_THRESHOLD", 12345)
    with no_fingerprints():
        assert engine.HASH_THRESHOLD == FINGERPRINT_BYTES
        with no_fingerprints():
            assert engine.HASH_THRESHOLD == FINGERPRINT_BYTES
        assert engine.HASH_THRESHOLD == FINGERPRINT_BYTES  # the outer block still runs
    assert engine.HASH_THRESHOLD == 12345
    with pytest.raises(RuntimeError), no_fingerprints():
        raise RuntimeError("a failed validation restores it too")
    assert engine.HASH_THRESHOLD == 12345


def test_a_ratings_table_empty_by_design_says_why_and_an_empty_fact_table_still_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """session 20's new user: a pairwise-only folder printed two bare row-count
    warnings. With no judge ratings in the folder and judgments of another kind,
    both warnings carry the note; a folder with judge ratings whose facts are empty
    (every row rejected), or a folder with no judgments at all, keeps the bare
    warning; a met expectation never has a note, nor a critical row-count
    expectation or another expectation not met on the same tables (review21c N3)."""
    import great_expectations.expectations as gxe

    from judge_bias.warehouse.expectations import CRITICAL, WARNING

    def count(n: int) -> str:
        return f"select i as judge from range({n}) as r(i)"

    def findings(
        ratings: int, pairwise: int, facts: int, sub: str, severity: str = WARNING
    ) -> list:
        path = tmp_path / sub
        path.mkdir()
        tables = {
            "base_inputs__judge_ratings": count(ratings),
            "base_inputs__pairwise_judgments": count(pairwise),
            "fct_judge_ratings": count(facts),
        }
        exp = {"min_value": 1, "severity": severity}
        suite = {t: [gxe.ExpectTableRowCountToBeBetween(**exp)] for t in tables}
        if severity == CRITICAL:  # another expectation not met, a warning, on the same table
            suite["fct_judge_ratings"].append(
                gxe.ExpectTableColumnsToMatchSet(
                    column_set=["judge", "x"], exact_match=False, severity=WARNING
                )
            )
        return validate(_suite_db(path, monkeypatch, tables, suite), ["s"]).findings

    note = (
        "no pointwise judge ratings in this folder (judge_ratings has no rows; "
        "pairwise_judgments: 3,220 rows): the ratings marts are empty by design"
    )
    pairwise_only = findings(0, 3220, 0, "a")
    assert [(f.table, f.success, f.note) for f in pairwise_only] == [
        ("base_inputs__judge_ratings", False, note),
        ("base_inputs__pairwise_judgments", True, None),
        ("fct_judge_ratings", False, note),
    ]
    assert pairwise_only[2].describe().endswith(f"; note: {note}")
    report = ValidationReport(pairwise_only)
    assert "2 warnings (2 expected on these inputs: see the note)" in report.summary()
    # judge ratings read, none made a fact: the bare warning
    rejected = findings(5, 3220, 0, "b")
    assert [(f.table, f.success, f.note) for f in rejected] == [
        ("base_inputs__judge_ratings", True, None),
        ("base_inputs__pairwise_judgments", True, None),
        ("fct_judge_ratings", False, None),
    ]
    assert "note" not in ValidationReport(rejected).summary()
    # nothing to judge at all: no reason to give
    nothing = findings(0, 0, 0, "c")
    assert [f.note for f in nothing] == [None, None, None]
    assert [f.success for f in nothing] == [False, False, False]
    # a met row count has no note, whatever the inputs (facts made up here)
    met = findings(0, 3220, 4, "d")
    assert [(f.table, f.success, f.note) for f in met][2] == ("fct_judge_ratings", True, None)
    # the same pairwise-only folder, its row counts critical: failures without the
    # note; a warning of another expectation on a table empty by design: no note
    critical = findings(0, 3220, 0, "e", CRITICAL)
    assert [(f.table, f.severity, f.success, f.note) for f in critical] == [
        ("base_inputs__judge_ratings", CRITICAL, False, None),
        ("base_inputs__pairwise_judgments", CRITICAL, True, None),
        ("fct_judge_ratings", CRITICAL, False, None),
        ("fct_judge_ratings", WARNING, False, None),
    ]


def test_an_incremental_summary_names_only_the_tables_validated_in_part() -> None:
    """After an incremental build a table validated on the load's rows alone is named
    with both counts; one the load brought no rows to (0 of 1,794: Play Favorites'
    human labels, sent once) or the whole of (a first load, a mart recomputed whole)
    is not: every row it holds was validated (five such lines on a real load)."""
    report = ValidationReport(
        findings=[],
        scoped={
            "base_inputs__judge_ratings": (3588, 14343),
            "base_inputs__human_annotations": (0, 1794),
            "fct_judge_ratings": (14343, 14343),
        },
    )
    lines = report.summary().splitlines()
    assert lines[1:] == [
        "  base_inputs__judge_ratings: validated on the 3,588 rows of the load of its 14,343 "
        "rows (the loads before validated theirs)"
    ]
