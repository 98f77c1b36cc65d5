"""The relation route through dbt: each input kind read from the source
judge_bias_inputs (a schema of the warehouse, an attached DuckDB database file, a
Parquet glob read by DuckDB) gives the same checked inputs, rejected_rows (reasons
and raw values as JSON) and input_row_counts as the same rows in files, and
input_row_counts.rows_read is a plain count(*) of each relation.

The input phase of judge-bias build (the loaders, staging, the checked inputs and
the quality marts with their tests) is built once per route on a small simulated
folder with bad rows; tests/test_dbt_package.py builds every mart from relations.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from judge_bias.inputs.contract import KINDS
from judge_bias.inputs.loading import InputError
from judge_bias.simulate import simulate
from judge_bias.warehouse.build import GATE_SELECTION, build, run_dbt

# rows that break the contract, appended to the simulated judge_ratings (judge,
# prompt_id, model, dimension, label, raw_output, framing, run_id), with the code
# each must be rejected for
BAD_RATINGS = [
    (
        ["nobody/judge", "p_x", "nobody/model", "correctness", "Correct", "", "", ""],
        "unknown_model",
    ),
    (["", "p_x", "m", "correctness", "Correct", "", "", ""], "missing_value"),
    (["j", "p_x", "m", "correctness", "", "no answer here", "", ""], "unparseable_raw_output"),
    (["j", "p_x", "m", "correctness", "Correct", "", "sideways", ""], "invalid_value"),
]
SCHEMA_VARS = {
    "judge_bias_input_relations": "all",
    "judge_bias_input_schema": "evals",
    "judge_bias_judge_ratings_identifier": "eval_ratings",
}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = simulate(tmp_path_factory.mktemp("relations") / "data", seed=7, n_prompts=6)
    (out / "truth.csv").unlink()
    path = out / "judge_ratings.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows += [row for row, _ in BAD_RATINGS] + [rows[1]]  # and a duplicate of row 1
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return out


def _create_tables(con: duckdb.DuckDBPyConnection, data: Path, schema: str, names: dict) -> None:
    """Each contract file as a table, in SQL (every column text, as the file holds it)."""
    con.execute(f"create schema if not exists {schema}")
    for kind in KINDS:
        path = data / f"{kind}.csv"
        con.execute(
            f"create table {schema}.{names.get(kind, kind)} as select * from read_csv("
            f"'{path}', header = true, all_varchar = true, quote = '\"', escape = '\"')"
        )


def _count(con: duckdb.DuckDBPyConnection, relation: str) -> int:
    """A plain count(*) of a relation, taken apart from the build."""
    return int(con.execute(f"select count(*) from {relation}").fetchall()[0][0])


def _phase(db: Path, data: Path | None, dbt_vars: dict | None) -> None:
    args = ["build", "--select", *GATE_SELECTION]
    run_dbt(args, db, data, quiet=True, capture=True, dbt_vars=dbt_vars)


def _table(db: Path, name: str) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        frame = con.execute(f"select * from main.{name}").df()
    drop = [c for c in frame.columns if c in ("_source_file", "source_file")]
    keys = [c for c in frame.columns if c in ("_row_number", "row_number", "source")]
    return frame.drop(columns=drop).sort_values(keys).reset_index(drop=True)


COMPARED = [
    *(f"base_inputs__{kind}" for kind in KINDS),
    "int_judge_ratings_checked",
    "rejected_rows",
    "input_row_counts",
]


@pytest.fixture(scope="module")
def file_route(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("files") / "w.duckdb"
    _phase(db, data, None)
    return db


def _same_as_files(file_db: Path, db: Path) -> None:
    differ = []
    for name in COMPARED:
        try:
            pd.testing.assert_frame_equal(_table(db, name), _table(file_db, name))
        except AssertionError as exc:
            differ.append(f"{name}: {str(exc).splitlines()[0]}")
    assert not differ, differ


def _counts(db: Path) -> dict[str, tuple[int, str]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("select source, rows_read, source_file from input_row_counts").fetchall()
    return {source: (n, where) for source, n, where in rows}


def test_the_file_route_rejects_the_bad_rows(file_route: Path) -> None:
    """The comparison below has teeth: the file route rejects each bad row."""
    with duckdb.connect(str(file_route), read_only=True) as con:
        got = con.execute(
            "select reason_code, raw_values from rejected_rows where source = 'judge_ratings' "
            "order by row_number"
        ).fetchall()
    assert [code for code, _ in got] == [code for _, code in BAD_RATINGS] + ["duplicate_key"]
    first = json.loads(got[0][1])
    assert first["judge"] == "nobody/judge" and first["model"] == "nobody/model"


def test_a_schema_of_the_warehouse(data: Path, file_route: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        _create_tables(con, data, "evals", {"judge_ratings": "eval_ratings"})
        names = {k: "eval_ratings" if k == "judge_ratings" else k for k in KINDS}
        plain = {k: _count(con, f"evals.{n}") for k, n in names.items()}
    _phase(db, None, SCHEMA_VARS)
    _same_as_files(file_route, db)
    counts = _counts(db)
    assert {k: n for k, (n, _) in counts.items()} == plain
    assert counts["judge_ratings"][1] == '"w"."evals"."eval_ratings"'


def test_an_attached_database_file(data: Path, file_route: Path, tmp_path: Path) -> None:
    evals = tmp_path / "evals.duckdb"
    with duckdb.connect(str(evals)) as con:
        _create_tables(con, data, "main", {})
        plain = {k: _count(con, k) for k in KINDS}
    db = tmp_path / "w.duckdb"
    attach = [{"path": str(evals), "alias": "evals_db", "read_only": True}]
    dbt_vars = {
        "judge_bias_attach": attach,
        "judge_bias_input_database": "evals_db",
        "judge_bias_input_relations": "all",
    }
    _phase(db, None, dbt_vars)
    _same_as_files(file_route, db)
    counts = _counts(db)
    assert {k: n for k, (n, _) in counts.items()} == plain
    assert counts["models"][1] == '"evals_db"."main"."models"'


def test_a_parquet_glob(data: Path, file_route: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    con = duckdb.connect()
    _create_tables(con, data, "main", {})
    plain = {}
    for kind in KINDS:
        (lake / kind).mkdir(parents=True)
        n = plain[kind] = _count(con, kind)
        half = n // 2  # two files, read in name order
        for part, clause in enumerate((f"limit {half}", f"offset {half}")):
            target = lake / kind / f"part-{part}.parquet"
            con.execute(f"copy (select * from {kind} {clause}) to '{target}' (format parquet)")
    con.close()
    db = tmp_path / "w.duckdb"
    location = f"read_parquet('{lake}/{{identifier}}/*.parquet')"
    dbt_vars = {"judge_bias_input_relations": "all", "judge_bias_input_location": location}
    _phase(db, None, dbt_vars)
    _same_as_files(file_route, db)
    counts = _counts(db)
    assert {k: n for k, (n, _) in counts.items()} == plain
    assert counts["prompts"][1] == f"read_parquet('{lake}/prompts/*.parquet')"


def test_a_missing_relation_fails_in_one_line(data: Path, tmp_path: Path) -> None:
    """Through judge-bias build: the loader's error, one line naming the source."""
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema evals")
        for kind, spec in KINDS.items():  # every relation but the ratings (eval_ratings)
            if kind != "judge_ratings":
                columns = ", ".join(f"{c} varchar" for c in spec.columns)
                con.execute(f"create table evals.{kind} ({columns})")
    expected = (
        r"^source judge_bias_inputs\.judge_ratings: cannot be read "
        r"\(Catalog Error: Table with name eval_ratings does not exist"
    )
    with pytest.raises(InputError, match=expected):
        build(None, db, quiet=True, dbt_vars=SCHEMA_VARS)
