"""One front door: `judge-bias build --vars '{...}'` gives the vars to dbt and to the
pre-flight, and a plain `dbt build --vars '{...}'` followed by `judge-bias validate
--publish` ends in the same state: the same build record, validation record and BI
snapshot (but for times, ids, paths and validated_by, which names the route).

Both builds run on a small simulated folder with ci_level 0.95 (the default is
0.90): the Wald intervals of bias_estimates must then be the estimate -+ the 0.975
normal quantile (scipy) times the standard error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from scipy.stats import norm

from judge_bias.cli import main
from judge_bias.inputs.loading import InputError
from judge_bias.simulate import simulate
from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse.provenance import (
    SNAPSHOT_VALIDATION,
    build_record_path,
    validation_path,
    warehouse_status,
)
from tests.warehouse_compare import assert_same_warehouse, table_names

VARS = {"ci_level": 0.95}
# what two routes to the same warehouse may differ in
# stage_times: when each stage began; validate --publish reaches no dbt stage of its own
RECORD_VARIES = {"build_id", "started_at", "finished_at", "pid", "pid_started", "database",
                 "bi_snapshot", "stage_times"}  # fmt: skip
VALIDATION_VARIES = {"validated_at", "validated_by", "database", "bi_snapshot",
                     "dbt_invocation_id"}  # fmt: skip


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = simulate(tmp_path_factory.mktemp("front_door") / "data", seed=11, n_prompts=12)
    (out / "truth.csv").unlink()
    return out


@pytest.fixture(scope="module")
def front_door(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("front") / "w.duckdb"
    args = ["build", "--data", str(data), "--db", str(db), "--vars", json.dumps(VARS)]
    assert main(args) == 0
    return db


@pytest.fixture(scope="module")
def plain_dbt(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dbt build alone (DESIGN: `dbt build --vars '{data_dir: DIR}'`), then validate."""
    folder = tmp_path_factory.mktemp("plain")
    db = folder / "w.duckdb"
    target = folder / "target"
    env = build_mod.dbt_env(db)
    env.pop("JUDGE_BIAS_DATA_DIR", None)
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), "build",
         "--vars", json.dumps({**VARS, "data_dir": str(data)}),
         "--target-path", str(target), "--log-path", str(folder / "logs")],
        cwd=build_mod.PROJECT_DIR, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not validation_path(db).exists()  # nothing but dbt ran
    args = ["validate", "--publish", "--db", str(db), "--target-path", str(target)]
    assert main(args) == 0
    return db


def test_vars_reach_the_marts_through_the_front_door(front_door: Path) -> None:
    with duckdb.connect(str(front_door), read_only=True) as con:
        rows = con.execute(
            "select ci_level, estimate, std_error, ci_low, ci_high from bias_estimates "
            "where analysis = 'main' and std_error > 0"
        ).fetchall()
        ppi_levels = con.execute("select distinct ci_level from ppi_model_scores").fetchall()
    assert rows
    z = norm.ppf(0.975)  # 1.95996...; the default 0.90 would give 1.64485...
    for level, estimate, se, low, high in rows:
        assert level == pytest.approx(0.95, abs=1e-12)
        assert (high - estimate) / se == pytest.approx(z, abs=1e-9)
        assert (estimate - low) / se == pytest.approx(z, abs=1e-9)
    assert ppi_levels == [(0.95,)]
    record = json.loads(validation_path(front_door).read_text())
    assert record["dbt_vars"] == VARS


def _without(record: dict, keys: set[str]) -> dict:
    return {k: v for k, v in record.items() if k not in keys}


def test_plain_dbt_then_validate_publish_ends_in_the_same_state(
    front_door: Path, plain_dbt: Path
) -> None:
    built = json.loads(build_record_path(front_door).read_text())
    plain = json.loads(build_record_path(plain_dbt).read_text())
    assert built["state"] == plain["state"] == "ok"
    assert _without(plain, RECORD_VARIES) == _without(built, RECORD_VARIES)
    assert [s for s, _ in built["stage_times"]][-3:] == ["validation", "publishing", "done"]
    assert [s for s, _ in plain["stage_times"]] == [
        "checking inputs", "validation", "publishing", "done"
    ]  # fmt: skip

    built_v = json.loads(validation_path(front_door).read_text())
    plain_v = json.loads(validation_path(plain_dbt).read_text())
    assert plain_v["validated_by"] == "judge-bias validate --publish"
    assert _without(plain_v, VALIDATION_VARIES) == _without(built_v, VALIDATION_VARIES)

    built_bi, plain_bi = Path(built_v["bi_snapshot"]), Path(plain_v["bi_snapshot"])
    with duckdb.connect(str(built_bi), read_only=True) as con:
        tables = table_names(con)
    with duckdb.connect(str(plain_bi), read_only=True) as con:
        assert table_names(con) == tables
        carried = json.loads(
            con.execute(f"select record from {SNAPSHOT_VALIDATION}").fetchall()[0][0]
        )
    # the snapshot carries the record written beside it (stamped a moment before it)
    assert _without(carried, {"validated_at"}) == _without(plain_v, {"validated_at"})
    assert_same_warehouse(built_bi, plain_bi, sorted(tables - {SNAPSHOT_VALIDATION}))

    with duckdb.connect(str(plain_dbt), read_only=True) as con:
        status = warehouse_status(plain_dbt, con)
    assert status.problems == [] and status.validation_current


def test_preflight_reads_the_csv_dialects_var(data: Path, tmp_path: Path) -> None:
    """The pre-flight checks a TSV file with the var dbt reads it with."""
    folder = tmp_path / "tsv"
    folder.mkdir()
    for path in data.glob("*.csv"):
        text = path.read_text(encoding="utf-8")
        if path.name == "judge_ratings.csv":
            text = text.replace(",", "\t")  # the simulated ratings hold no comma in a value
        (folder / path.name).write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="missing required column"):
        build_mod.preflight(folder, {})
    assert build_mod.preflight(folder, {"csv_dialects": {"judge_ratings": "tsv"}}) == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--vars", "[1, 2]"], "is not a mapping of var -> value"),
        (["--vars", "{ci_level: [}"], "is not YAML"),
        (["--vars", "{data_dir: /elsewhere}"], "name two data folders; give one of them"),
        (["--vars", "{judge_bias_input_relations: [models]}"], "judge_ratings, the one required"),
        (["--vars", "{judge_bias_input_relations: all}"], "the relation route reads no data"),
    ],
)
def test_bad_vars_are_one_line_usage_errors(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code = main(["build", "--data", str(data), "--db", str(tmp_path / "w.duckdb"), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert message in err[-1] and err[-1].startswith("judge-bias build: ")
    assert not (tmp_path / "w.duckdb").exists()


@pytest.mark.parametrize("name", ["main.duckdb", "temp.duckdb", "System.db"])
def test_a_warehouse_named_like_a_duckdb_catalog_is_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """DuckDB opens main.duckdb as catalog main_db (main, temp and system are its own),
    so dbt-duckdb's Python models could not find their tables: refused in one line
    before anything is written, not a failed build after minutes."""
    code = main(["build", "--data", str(data), "--db", str(tmp_path / name)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert "DuckDB reserves the name" in err[-1] and err[-1].startswith("judge-bias build: ")
    assert list(tmp_path.iterdir()) == []
