"""Without dbt: one-line errors and exit codes, dbt failures told by their cause,
the build record's states as a reader sees them, leftovers of killed builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from judge_bias.cli import main
from judge_bias.errors import InputError
from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse import dbt_parse
from judge_bias.warehouse.dbt_child import dbt_failure
from judge_bias.warehouse.provenance import (
    BuildRecord,
    build_record_path,
    validation_path,
    warehouse_status,
)
from judge_bias.warehouse.snapshot import remove_stale_tmp


def dead_pid() -> int:
    """The PID of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture()
def sleeper():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def _last_line(err: str) -> str:
    lines = err.strip("\n").splitlines()
    return lines[-1]


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["validate", "--db", "{tmp}/missing.duckdb"], 2, ["missing.duckdb", "no warehouse"]),
        (["report", "--db", "{tmp}/missing.duckdb"], 2, ["missing.duckdb", "no warehouse"]),
        (["build", "--data", "{tmp}/no such dir", "--db", "{tmp}/w.duckdb"], 2, ["no such dir"]),
    ],
)
def test_errors_are_one_line_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv, code, words
) -> None:
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert len(err.strip("\n").splitlines()) == 1
    assert err.startswith(f"judge-bias {argv[0]}: ")
    assert all(w in err for w in words), err


def test_debug_shows_the_traceback_and_still_ends_with_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.duckdb"
    assert main(["validate", "--db", str(missing), "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert _last_line(err).startswith(f"judge-bias validate: --db {missing}: no warehouse")
    assert main(["--debug", "validate", "--db", str(missing)]) == 2  # before the verb too
    assert "Traceback" in capsys.readouterr().err


def test_unexpected_errors_exit_1_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError("first line\n  second line")

    monkeypatch.setattr(build_mod, "build", boom)
    assert main(["build", "--data", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "judge-bias build: RuntimeError: first line second line "
        "(unexpected: run again with --debug for the traceback)"
    )


def _run_results(path: Path, results: list[dict]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "run_results.json").write_text(json.dumps({"results": results}), encoding="utf-8")


def test_dbt_failure_names_the_node_and_the_cause(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    target = build_mod.target_dir(db)
    message = (
        "Runtime Error in model base_inputs__judge_ratings (models/x.py)\n  Python model failed:"
        '\n  Traceback (most recent call last):\n    File "x.py", line 5, in model\n'
        "  judge_bias.inputs.loading.InputError: /d/judge_ratings.csv: missing required column(s) "
        "'model'\n  "
    )
    _run_results(
        target,
        [
            {"unique_id": "model.judge_bias.stg_x", "status": "success", "message": "OK"},
            {"unique_id": "model.judge_bias.base_inputs__judge_ratings", "status": "error",
             "message": message},
        ],
    )  # fmt: skip
    exc = dbt_failure(["build"], target, time.time() - 60, [], 1)
    assert isinstance(exc, InputError)
    assert str(exc) == "/d/judge_ratings.csv: missing required column(s) 'model'"

    failing_test = (
        "Got 3 results, configured to fail if != 0\n\n  compiled code at target/compiled/x.sql"
    )
    _run_results(
        target,
        [
            {"unique_id": "test.judge_bias.unique_fct_key.abc123", "status": "fail",
             "message": failing_test},
            {"unique_id": "model.judge_bias.bias_fits", "status": "error",
             "message": "Runtime Error\n  Binder Error: column x not found\n"},
        ],
    )  # fmt: skip
    exc = dbt_failure(["build"], target, time.time() - 60, [], 1)
    assert isinstance(exc, build_mod.BuildError)
    assert str(exc) == (
        "dbt build failed in test unique_fct_key: Got 3 results, configured to fail if != 0 "
        "(and 1 more failing nodes)"
    )
    # run_results.json older than the run is another run's: dbt's own output is used
    output = ["\x1b[0m01:02:03  Encountered an error:\n", "Compilation Error\n", "  var x bad\n"]
    exc = dbt_failure(["build"], target, time.time() + 60, output, 2)
    assert str(exc) == "dbt build failed: var x bad"


def test_stale_snapshot_leftovers_of_dead_builds_are_removed(tmp_path: Path, sleeper) -> None:
    bi = tmp_path / "bi.duckdb"
    bi.write_bytes(b"snapshot")
    dead = tmp_path / f".bi.duckdb.{dead_pid()}.tmp"
    dead_wal = tmp_path / f"{dead.name}.wal"
    live = tmp_path / f".bi.duckdb.{sleeper.pid}.tmp"
    other = tmp_path / f".other.duckdb.{dead_pid()}.tmp"
    for path in (dead, dead_wal, live, other):
        path.write_bytes(b"x")
    assert sorted(remove_stale_tmp(bi)) == sorted([dead, dead_wal])
    assert live.exists() and other.exists() and bi.read_bytes() == b"snapshot"


def _warehouse(tmp_path: Path, invocation: str | None) -> Path:
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    if invocation:
        con.execute(
            "create table dbt_last_run as select ? as invocation_id, 'build' as command, "
            "now() as started_at, '/data/other' as data_dir",
            [invocation],
        )
    con.close()
    return db


def _status(db: Path) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return warehouse_status(db, con).problems
    finally:
        con.close()


def _validation_record(db: Path, invocation: str, success: bool = True) -> None:
    record = {
        "validated_at": "2025-01-01T00:00:00+00:00",
        "data_dir": "/data/demo",
        "dbt_invocation_id": invocation,
        "success": success,
        "critical_failures": [],
    }
    validation_path(db).write_text(json.dumps(record), encoding="utf-8")


def _build_record(db: Path, **fields) -> None:
    record = {
        "state": "ok",
        "stage": "done",
        "started_at": "2025-01-01T00:00:00+00:00",
        "data_dir": "/data/demo",
        "pid": dead_pid(),
        "message": None,
    }
    build_record_path(db).write_text(json.dumps(record | fields), encoding="utf-8")


def test_status_of_a_validated_warehouse_is_clean(tmp_path: Path) -> None:
    db = _warehouse(tmp_path, "inv-1")
    _validation_record(db, "inv-1")
    _build_record(db)
    assert _status(db) == []


def test_status_says_killed_running_failed_and_not_validated(tmp_path: Path, sleeper) -> None:
    db = _warehouse(tmp_path, "inv-2")
    _validation_record(db, "inv-1")  # of an earlier dbt run: stale
    _build_record(db, state="running", stage="dbt build")  # its process is gone
    killed, stale = _status(db)
    assert "did not finish" in killed and "killed during the stage 'dbt build'" in killed
    assert stale.startswith("Not validated: the tables were rebuilt (dbt build")
    assert "/data/other" in stale and "/data/demo" in stale

    _build_record(db, state="running", stage="validation", pid=sleeper.pid)
    assert f"A build is running on this warehouse now (PID {sleeper.pid}" in _status(db)[0]

    _build_record(db, state="failed", stage="dbt build", message="dbt build failed in x: y")
    assert "failed during the stage 'dbt build': dbt build failed in x: y" in _status(db)[0]

    validation_path(db).unlink()
    assert _status(db)[-1].startswith("Not validated: no validation record")


def test_a_running_build_blocks_another(tmp_path: Path, sleeper) -> None:
    db = tmp_path / "w.duckdb"
    _build_record(db, state="running", stage="dbt build", pid=sleeper.pid)
    with pytest.raises(
        build_mod.BuildError, match=f"another judge-bias build \\(PID {sleeper.pid}"
    ):
        build_mod.build(tmp_path, db)


def test_build_record_is_written_at_each_stage(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    record = BuildRecord(db, tmp_path / "data")
    record.write()
    first = json.loads(build_record_path(db).read_text())
    assert first["state"] == "running" and first["pid"] == os.getpid()
    assert first["finished_at"] is None and first["stage"] == "checking inputs"
    record.reach("validation")
    record.finish("validation_failed", "x.csv: all rejected")
    last = json.loads(build_record_path(db).read_text())
    assert (last["state"], last["stage"], last["message"]) == (
        "validation_failed",
        "validation",
        "x.csv: all rejected",
    )
    assert last["build_id"] == first["build_id"] and last["finished_at"]
    assert not list(tmp_path.glob("*.tmp"))  # written by rename


def test_dbt_runs_numpys_blas_on_one_thread_unless_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dbt runs two nodes at once: each Python model's OpenBLAS on one thread (its own
    threads spun on the other core); a user's OPENBLAS_NUM_THREADS is kept."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert build_mod.dbt_env(tmp_path / "w.duckdb")["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    assert build_mod.dbt_env(tmp_path / "w.duckdb")["OPENBLAS_NUM_THREADS"] == "4"


def test_second_phase_runs_duckdb_on_one_thread_unless_set() -> None:
    """judge-bias build's second phase runs DuckDB on one thread; a user's
    JUDGE_BIAS_DUCKDB_THREADS is kept (the hook applies it to both phases)."""
    env: dict[str, str] = {}
    dbt_parse.second_phase_threads(env)
    assert env == {"JUDGE_BIAS_DUCKDB_THREADS": "1"}
    env = {"JUDGE_BIAS_DUCKDB_THREADS": "2"}
    dbt_parse.second_phase_threads(env)
    assert env == {"JUDGE_BIAS_DUCKDB_THREADS": "2"}
