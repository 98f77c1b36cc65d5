"""``judge-bias build --incremental`` (docs/incremental.md): the build's folder is
one load appended to the warehouse's inputs (judge_bias.inputs.loads). The load
is kept only when the build passes: the warehouse as it was before is copied
aside and put back when the build fails or its validation does, so a rejected
load never stays in the accumulated inputs."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from judge_bias.inputs.loads import LOAD_COLUMNS, is_on
from judge_bias.warehouse.atomic import copy_atomic, write_atomic
from judge_bias.warehouse.dbt_vars import VarsError

INCREMENTAL_VAR = "judge_bias_incremental"
# The base table whose columns say whether a warehouse holds loads.
PROBE_TABLE = "base_inputs__judge_ratings"
# The view of the fact rows an incremental build's load recomputed
# (models/intermediate/int_load_recomputed_facts.sql): the validation reads the load's
# facts through it, the BI snapshot appends them. Here, not in validation.py, so that
# the snapshot (imported by every judge-bias command) does not import Great Expectations.
RECOMPUTED_FACTS = "int_load_recomputed_facts"
# the build's message when a failed load was undone (the report's status line shows it)
ROLLED_BACK = "the load was rolled back: the warehouse is as it was before it"
# beside the warehouse: the rejected rows of the last load that was rolled back (the
# rollback takes them out of rejected_rows with the rest of the load)
REJECTED_LOAD_SUFFIX = ".rejected-load.parquet"


class IncrementalError(VarsError):
    """The warehouse cannot take a load (built without --incremental); one line."""


def incremental_vars(dbt_vars: Mapping[str, Any], incremental: bool) -> dict[str, Any]:
    """The vars of the build: with ``incremental`` the var on. No load id: the
    loaders name the load when they run (judge_bias.inputs.loads.process_load_id,
    one per dbt process), so every load's vars are the same and dbt keeps its
    parse (a var whose value changed every load made dbt parse the whole project
    again: about 5 CPU s of every append). A judge_bias_load_id given is kept. On
    the relation route (judge_bias_input_relations) a load is the relations' rows
    above the previous loads' watermark (judge_bias_loaded_at_column), or each
    relation whole without it (docs/incremental.md, "Loads from relations")."""
    out = dict(dbt_vars)
    if incremental:
        out[INCREMENTAL_VAR] = True
    return out


def holds_loads(db: Path) -> bool | None:
    """Whether the warehouse's inputs are loads: True, False (built without
    --incremental), or None (no inputs yet: the first build creates them)."""
    if not db.exists():
        return None
    con = duckdb.connect(str(db), read_only=True)
    try:
        cols = {
            r[0]
            for r in con.execute(
                "select column_name from information_schema.columns "
                "where table_schema = 'main' and table_name = ?",
                [PROBE_TABLE],
            ).fetchall()
        }
    finally:
        con.close()
    if not cols:
        return None
    return set(LOAD_COLUMNS) <= cols


def holds_no_build(db: Path) -> bool:
    """Whether the warehouse file holds no table nor view at all: the empty warehouse
    a rolled-back first load leaves (guard_load), or an empty file."""
    if db.stat().st_size == 0:
        return True
    con = duckdb.connect(str(db), read_only=True)
    try:
        return not _one(con, "select count(*) from information_schema.tables")
    finally:
        con.close()


def drop_load_temps(db: Path) -> list[str]:
    """Drop the staging tables dbt-duckdb leaves behind after an incremental Python
    model (base_inputs__<kind>__dbt_tmp<time>); returns their names."""
    con = duckdb.connect(str(db))
    try:
        names = [
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main' "
                "and table_name like 'base\\_inputs\\_\\_%\\_\\_dbt\\_tmp%' escape '\\'"
            ).fetchall()
        ]
        for name in names:
            con.execute(f'drop table if exists main."{name}"')
        return names
    finally:
        con.close()


@dataclass
class LoadGuard:
    """The warehouse copied aside before a load; ``restore`` on failure,
    ``discard`` on success."""

    db: Path
    backup: Path | None
    loads: bool = False  # the build's inputs are loads (var judge_bias_incremental)
    refresh: bool = False  # --full-refresh: every rejected row is the folder's

    def restore(self) -> str | None:
        """Put the warehouse back as it was before the load, its rejected rows kept
        beside it first (keep_rejected); what was done, in words for the build's
        message, or None when there was nothing to put back."""
        if self.backup is not None and self.backup.exists():
            kept = keep_rejected(self.db, self.backup, self.refresh)
            if not kept:  # an earlier failed load's would be taken for this one's
                rejected_load_path(self.db).unlink(missing_ok=True)
            _put_back(self.backup, self.db)
            self.backup.unlink()
            if kept:
                where = rejected_load_path(self.db)
                return f"{ROLLED_BACK}; its {kept:,} rejected rows are kept in {where}"
            return ROLLED_BACK
        return None

    def discard(self) -> None:
        """The load is published: its copy, and an earlier failed load's kept rejected
        rows (this load's outcome replaces them), are removed."""
        if self.backup is not None:
            self.backup.unlink(missing_ok=True)
            rejected_load_path(self.db).unlink(missing_ok=True)


def rejected_load_path(db: Path) -> Path:
    """Where a rolled-back load's rejected rows are kept (``<db>.rejected-load.parquet``)."""
    return db.with_name(db.name + REJECTED_LOAD_SUFFIX)


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> Any:
    row = con.execute(sql, params or []).fetchone()
    assert row is not None
    return row[0]


def _has_rejected_rows(con: duckdb.DuckDBPyConnection, catalog: str) -> bool:
    sql = ("select count(*) from duckdb_tables() where database_name = ? "
           "and schema_name = 'main' and table_name = 'rejected_rows'")  # fmt: skip
    return bool(_one(con, sql, [catalog]))


def _same_table(con: duckdb.DuckDBPyConnection, table: str, other: str) -> bool:
    """Whether two tables hold the same columns and the same rows (as multisets), in
    DuckDB: no row in Python."""
    names = [[d[0] for d in con.execute(f"from {t} limit 0").description] for t in (table, other)]
    if names[0] != names[1]:
        return False
    if _one(con, f"select count(*) from {table}") != _one(con, f"select count(*) from {other}"):
        return False
    return not _one(con, f"select count(*) from (from {table} except all from {other})")


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def keep_rejected(db: Path, backup: Path, refresh: bool) -> int:
    """The failed load's rows of ``rejected_rows`` written to rejected_load_path(db)
    before the rollback takes them away: the rows not in the copy made before the load
    (a load's rows are numbered after the earlier loads', so (source, row_number) names
    a row), every row after --full-refresh or a first load, unless the table is the
    copy's, row for row: then this load did not rebuild it (a build stopped before dbt
    reached it: Ctrl-C, a loader or staging failure) and its rows are the warehouse's
    put back, not the load's (mend23b), so none is kept. Written by DuckDB (no row in
    Python) to a temporary file renamed into place; returns the rows kept (0: no file).
    A warehouse that cannot be read (a build killed part-way) keeps none, with a note:
    the rollback goes on."""
    if not db.exists():  # a first load that failed before dbt wrote the warehouse
        return 0
    con = None
    try:
        con = duckdb.connect(str(db), read_only=True)
        if not _has_rejected_rows(con, _one(con, "select current_database()")):
            return 0
        rows = "select * from main.rejected_rows as r"
        con.execute(f"attach {_quoted(backup)} as before_load (read_only)")
        if not _has_rejected_rows(con, "before_load"):
            pass  # a first load: every row is the load's
        elif refresh:
            if _same_table(con, "main.rejected_rows", "before_load.main.rejected_rows"):
                return 0  # not rebuilt by this load: the old warehouse's rows
        else:
            rows += (
                " where not exists (select 1 from before_load.main.rejected_rows as b"
                " where b.source = r.source and b.row_number = r.row_number)"
            )
        kept = int(_one(con, f"select count(*) from ({rows})"))
        if kept:
            ordered = f"{rows} order by source, row_number"
            reader = con

            def copy(tmp: Path) -> None:
                reader.execute(f"copy ({ordered}) to {_quoted(tmp)} (format parquet)")

            write_atomic(rejected_load_path(db), copy)
        return kept
    except duckdb.Error as exc:
        print(f"note: the failed load's rejected rows could not be kept: {exc}", file=sys.stderr)
        return 0
    finally:
        if con is not None:
            con.close()


def _wal(db: Path) -> Path:
    """DuckDB's write-ahead log beside a warehouse file."""
    return db.with_name(db.name + ".wal")


def _empty_duckdb(path: Path) -> None:
    duckdb.connect(str(path)).close()


def _put_back(backup: Path, db: Path) -> None:
    """The copy made before a load put back over the warehouse, without the load's
    write-ahead log: a killed or interrupted build leaves one, and DuckDB would replay
    it onto the copy (a first load's rows back in the empty warehouse) or refuse to
    open the file (a log of a later checkpoint than the copy's)."""
    _wal(db).unlink(missing_ok=True)
    copy_atomic(backup, db)


def guard_load(db: Path, dbt_vars: Mapping[str, Any], full_refresh: bool) -> LoadGuard:
    """Before an incremental build: check the warehouse can take a load and copy it
    aside, an empty warehouse standing for one that does not exist yet (nothing to
    do without the var). With --full-refresh, which replaces the inputs by the
    folder's, the warehouse is copied too: a folder that fails leaves the inputs as
    they were, not the rejected folder's for the next load to append to."""
    if not is_on(dbt_vars.get(INCREMENTAL_VAR, False)):
        return LoadGuard(db, None)
    backup = db.with_name(db.name + ".before-load")
    if backup.exists() and db.exists():
        # a load whose build was killed (no rollback ran): undo it before this one
        _put_back(backup, db)
        print(
            f"note: {backup.name} was left by a load whose build did not finish: "
            f"{db.name} is put back as it was before that load",
            file=sys.stderr,
        )
    holds = holds_loads(db)
    if holds is False and not full_refresh:
        raise IncrementalError(
            f"{db} was built without --incremental: its inputs are not loads; build it "
            "once with --incremental --full-refresh, then append"
        )
    if db.exists():
        if _wal(db).exists():  # the file alone is not the warehouse: checkpoint first
            duckdb.connect(str(db)).close()
        copy_atomic(db, backup)
    else:
        # the first load of a new warehouse: as it was before is an empty warehouse.
        # Without this copy a first load that failed (its gates, its validation) or was
        # killed stayed in the inputs, and the next load appended to it. A copy left
        # beside a warehouse removed since is replaced, not taken for it.
        write_atomic(backup, _empty_duckdb)
    return LoadGuard(db, backup, loads=True, refresh=full_refresh)
