"""Import a format through the CLI and build it: the shared steps of the importer
tests, with the row reconciliation every importer must pass."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from judge_bias.cli import main
from judge_bias.warehouse.build import BuildResult, build
from tests.conftest import query


def csv_records(path: Path) -> int:
    """Records in a CSV file, counted by Python's csv module (header excluded)."""
    with path.open(newline="", encoding="utf-8") as fh:
        return sum(1 for _ in csv.reader(fh)) - 1


def import_and_build(
    fmt: str, files: list[Path], tmp: pytest.TempPathFactory, *extra: str
) -> tuple[Path, BuildResult]:
    """`judge-bias import FMT FILES --out DIR`, then the build of DIR."""
    out = tmp.mktemp(fmt) / "data"
    assert main(["import", fmt, *map(str, files), "--out", str(out), *extra]) == 0
    return out, build(out, out.parent / "w.duckdb", quiet=True)


def assert_reconciled(out: Path, result: BuildResult) -> dict[str, tuple[int, int]]:
    """The build is green, and every file written was read whole: rows_read equals
    the records in the file and rows_read = accepted + rejected. Returns
    kind -> (rows_read, rows_rejected)."""
    assert result.validation.success, result.validation.summary()
    counts = query(result.db_path, "select * from input_row_counts").set_index("source")
    got = {}
    for path in sorted(out.glob("*.csv")):
        row = counts.loc[path.stem]
        assert row["rows_read"] == csv_records(path), path.name
        assert row["rows_read"] == row["rows_accepted"] + row["rows_rejected"], path.name
        got[path.stem] = (int(row["rows_read"]), int(row["rows_rejected"]))
    return got


def nonfinite_columns(db: Path) -> list[str]:
    """`table.column: count` of every DOUBLE/FLOAT column of the warehouse's main
    schema holding NaN or infinity (a statistic undefined on the data must be null
    with a note, never NaN or inf)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = con.execute(
            "select table_name, column_name from information_schema.columns "
            "where table_schema = 'main' and data_type in ('DOUBLE', 'FLOAT')"
        ).fetchall()
        bad = []
        for table, column in columns:
            sql = f'select count(*) from main."{table}" where not isfinite("{column}")'
            n = con.execute(sql).fetchall()[0][0]
            if n:
                bad.append(f"{table}.{column}: {n}")
        return bad
    finally:
        con.close()
