"""A whole `judge-bias build` on a warehouse with a write-ahead log DuckDB refuses to
replay (mend23's D1, end to end): the log is set aside by the build's first open and
the build goes on to publish. tests/test_incremental.py checks the first open alone on
both kinds of refused log; this checks that nothing after it trips on the log."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from judge_bias.warehouse.build import build
from tests.conftest import DEMO_DIR


def _killed_writing(db: Path, *sql: str) -> None:
    """``sql`` run on ``db`` by a process that dies before DuckDB's final checkpoint,
    as a killed build's dbt: what it wrote after its last checkpoint is in the log."""
    script = "import duckdb, os, sys\ncon = duckdb.connect(sys.argv[1])\n"
    script += "".join(f"con.execute({q!r})\n" for q in sql) + "os._exit(0)\n"
    subprocess.run([sys.executable, "-c", script, str(db)], check=True)


def test_a_build_on_a_warehouse_with_a_later_checkpoints_log_publishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Built as mend23b's reviewer did: a byte copy of the warehouse set aside (older
    code's guard), a killed load that inserts, checkpoints and inserts, the copy put
    back beside its log: DuckDB refuses the log ("WAL checkpoint iteration does not
    match"). `judge-bias build --db` on the demo exits 0, says it moved the log, keeps
    it byte for byte at <db>.wal.stale-<time>, leaves no log beside the warehouse, and
    the warehouse holds the demo's build (its ratings, a passed validation, the BI
    snapshot). Fails when the build's first open does not set the log aside (exit 1
    with DuckDB's "Failure while replaying WAL file")."""
    db = tmp_path / "w.duckdb"
    table = "create table t (i integer)"
    with duckdb.connect(str(db)) as con:
        con.execute(table)
        con.execute("insert into t values (1)")
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(db, copy)
    _killed_writing(db, "insert into t values (2)", "checkpoint", "insert into t values (3)")
    os.replace(copy, db)
    wal = db.with_name(db.name + ".wal")
    log = wal.read_bytes()
    with pytest.raises(duckdb.IOException, match="checkpoint iteration does not match"):
        duckdb.connect(str(db), read_only=True)

    result = build(DEMO_DIR, db, quiet=True)
    err = capsys.readouterr().err
    (aside,) = tmp_path.glob("w.duckdb.wal.stale-*")
    assert aside.read_bytes() == log and not wal.exists()
    assert "w.duckdb.wal cannot be replayed onto w.duckdb (DuckDB: this WAL" in err
    assert f"moved aside to {aside}" in err
    # the build went on to the end: validated, published, the demo's ratings in it
    assert result.validation.success and result.bi_path is not None and result.bi_path.exists()
    accepted = next(c.rows_accepted for c in result.inputs if c.source == "judge_ratings")
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from fct_judge_ratings").fetchone() == (accepted,)
        # the copy's own table as it was: the set-aside log's rows 2 and 3 not replayed
        assert con.execute("select i from t").fetchall() == [(1,)]
