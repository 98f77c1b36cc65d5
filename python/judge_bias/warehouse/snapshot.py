"""The BI snapshot: the marts copied into their own DuckDB file, published by an
atomic rename only after a build whose validation passed.

A BI tool keeps `warehouse/bi.duckdb` open read-only; the build writes only
`warehouse/judge_bias.duckdb`, so it is never blocked. The new snapshot is
written to a temporary file beside the old one and renamed over it: a reader
keeps the file it opened (the old snapshot) and sees the new one when it
reconnects, never a half-written one. A build killed while writing leaves its
temporary file; the next build removes it (remove_stale_tmp).

The snapshot carries the validation it was published after: table
``snapshot_validation`` (one row, column ``record``: the validation record as
JSON, the one written beside the warehouse), so a report or a reader of the
snapshot alone can tell it was validated, when, and on which data.

The file is written in DuckDB's storage version STORAGE_VERSION, which every
DuckDB 1.x client opens (the BI tools embed 1.x: the Node, JDBC and SQLAlchemy
drivers); the build's own duckdb would otherwise write its newest format, which
1.x refuses ("Trying to read a database file with version number ..."). Each
table and column carries its description from the dbt YAML as a comment
(COMMENT ON), read back with duckdb_tables() and duckdb_columns().

A mart the warehouse holds as a view (debiased_scores) is a view in the snapshot
too, over the snapshot's own tables (its SQL names them by schema, not catalog):
nothing to copy. Every DuckDB 1.x client queries it in the file it opened; DuckDB
1.0 and 1.1 bind it in their default catalog, so when the snapshot is ATTACHed under
an alias they read the default catalog's same-named tables if it has them (wrong
rows) and fail otherwise (docs/report.md says so; 1.2 on bind it in the snapshot's
catalog). A view whose
SQL does not bind to the snapshot's tables is copied as a table.

On an incremental build's load (docs/incremental.md, "The BI snapshot of a load")
the published snapshot is copied as a file and only the rows of
``fct_judge_ratings`` the load recomputed are replaced (the other tables are copied
whole), when the published file is the snapshot of the warehouse as the previous
load left it (table ``snapshot_load``); otherwise the marts are copied whole.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from judge_bias.warehouse.incremental import RECOMPUTED_FACTS
from judge_bias.warehouse.provenance import SNAPSHOT_VALIDATION, pid_alive

# The storage format of bi.duckdb: v1.0.0 is read by DuckDB 1.0 and every later
# client (tests/test_bi_snapshot.py opens it with duckdb 1.1 and 1.4 and the Node
# client). It stores every type the marts use; a VARIANT column would fail the
# publish ("not supported in storage versions prior to v1.5.0").
STORAGE_VERSION = "v1.0.0"
# FSST is not tried on the snapshot's text columns: in storage v1.0.0 DuckDB weighs
# it against dictionary compression on every segment of every text column. At 10M
# ratings (fct_judge_ratings and debiased_scores, 10M rows each) the copy took 28 to
# 31 CPU s with it, 23 to 24 without, and the file shrank (219 -> 214 MB).
UNUSED_COMPRESSION = "fsst"
# the dbt project's name (dbt_project.yml), its package name in a team's project
PACKAGE = "judge_bias"

# the snapshot's one table that is not a mart, described for the BI user who sees it
SNAPSHOT_VALIDATION_COMMENT = (
    "The validation this snapshot was published after: one row, column record holds "
    "the validation record as JSON (outcome, time, the data folder, each check)."
)


# The mart an incremental load appends to (one row per rating, incremental by prompt
# and run in the warehouse); the other marts are copied whole (debiased_scores, the
# other table of one row per rating, changes on every row at every load).
APPENDED = "fct_judge_ratings"
# The snapshot's table naming the warehouse state it holds (incremental builds only):
# the load, the dbt command that last built the facts for it (int_load_scope's
# facts_built_by) and how many loads were appended since the last whole copy.
SNAPSHOT_LOAD = "snapshot_load"
SNAPSHOT_LOAD_COMMENT = (
    "The incremental load this snapshot holds (load_id), the dbt command that built "
    "its facts (facts_built_by) and the loads appended since the marts were last copied "
    "whole (appended_loads): the next load appends its ratings to this file only when "
    "it follows this state."
)
# A whole copy every MAX_APPENDS loads: the rows a load deletes (a re-sent run) keep
# their space in the v1.0.0 file, and a whole copy writes it anew.
MAX_APPENDS = 20


@dataclass
class MartDocs:
    """A mart's description and its columns' descriptions, from the dbt YAML."""

    description: str = ""
    columns: dict[str, str] = field(default_factory=dict)


def mart_docs(manifest_path: Path) -> dict[str, MartDocs]:
    """The models under models/marts/ of the judge_bias project (by name, sorted) with
    their descriptions, from dbt's manifest (doc blocks already rendered). In a team's
    project that installs judge_bias as a dbt package, its own models are not ours."""
    manifest = json.loads(manifest_path.read_text())
    marts = {
        node["name"]: MartDocs(
            node.get("description") or "",
            {c["name"]: c.get("description") or "" for c in node.get("columns", {}).values()},
        )
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model"
        and node["path"].startswith("marts/")
        and node.get("package_name", PACKAGE) == PACKAGE
    }
    return dict(sorted(marts.items()))


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _comment(con: duckdb.DuckDBPyConnection, table: str, docs: MartDocs) -> None:
    """COMMENT ON the snapshot's table and its documented columns (a column the YAML
    names but the table lacks is skipped: the dbt tests catch that)."""
    name = f"snapshot.main.{_ident(table)}"
    if docs.description:
        con.execute(f"comment on table {name} is {_literal(docs.description)}")
    have = {r[0] for r in con.execute(f"describe {name}").fetchall()}
    for column, text in docs.columns.items():
        if text and column in have:
            con.execute(f"comment on column {name}.{_ident(column)} is {_literal(text)}")


def _tmp_path(bi_path: Path, pid: int) -> Path:
    return bi_path.with_name(f".{bi_path.name}.{pid}.tmp")


def remove_stale_tmp(bi_path: Path) -> list[Path]:
    """Remove the temporary snapshots (and their WAL files) that killed builds left
    beside ``bi_path``: those whose process is gone. A running build's stays."""
    removed = []
    prefix = f".{bi_path.name}."
    for path in bi_path.parent.glob(f"{glob.escape(prefix)}*.tmp*"):
        pid, _, rest = path.name.removeprefix(prefix).partition(".")
        if pid.isdigit() and rest in ("tmp", "tmp.wal") and not pid_alive(int(pid)):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


# how often CopyStop.stop interrupts the copy's connection until it is closed
INTERRUPT_EVERY = 0.05


class CopyStop:
    """Stops copy_marts running in another thread (an interrupt of the build, or the
    suites failing): the statement running is interrupted (DuckDB's interrupt(): ~20
    ms), and no other starts; the copy then raises and removes its file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._con: duckdb.DuckDBPyConnection | None = None
        self.stopped = False

    def running(self, con: duckdb.DuckDBPyConnection | None) -> None:
        """The copy's connection while it runs (None once it is closed)."""
        with self._lock:
            self._con = con
        if con is not None:
            self.check()

    def check(self) -> None:
        if self.stopped:
            raise InterruptedError("the BI snapshot's copy was stopped")

    def stop(self) -> None:
        """Stop the copy and return once its connection is closed (or never opened).
        The interrupt is sent again every INTERRUPT_EVERY seconds: one that lands
        between two statements (after the copy's check, before DuckDB starts the next)
        is lost, and the next statement would run to its end."""
        with self._lock:
            self.stopped = True
        while True:
            with self._lock:
                if self._con is None:
                    return
                self._con.interrupt()
            time.sleep(INTERRUPT_EVERY)


@dataclass(frozen=True)
class LoadState:
    """The warehouse state a snapshot holds: an incremental load and the dbt command
    that last built its facts."""

    load_id: str
    facts_built_by: str


@dataclass(frozen=True)
class AppendPlan:
    """How copy_marts writes an incremental build's snapshot: ``previous`` is the state
    the published file must hold to be appended to (None: copy whole), ``current``
    the state the new snapshot holds, ``appended`` the loads appended after it."""

    current: LoadState
    previous: LoadState | None
    appended: int


def _has_table(con: duckdb.DuckDBPyConnection, database: str, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_tables() where database_name = ? and schema_name = "
            "'main' and table_name = ?",
            [database, table],
        ).fetchone()[0]  # type: ignore[index]
    )


def _columns(con: duckdb.DuckDBPyConnection, database: str, table: str) -> list[tuple[Any, ...]]:
    return con.execute(
        "select column_name, data_type from duckdb_columns() where database_name = ? "
        "and schema_name = 'main' and table_name = ? order by column_index",
        [database, table],
    ).fetchall()


def _append_plan(con: duckdb.DuckDBPyConnection, bi_path: Path) -> AppendPlan | None:
    """With the warehouse attached as ``warehouse``: the plan of an incremental
    warehouse's snapshot (None when the warehouse holds no loads). The published
    snapshot can be appended to when the load recomputed only its prompts and the
    file holds the state the previous load left (the previous load, and the dbt
    command that last built its facts: a later command, a plain dbt build of the
    same load, changes it), with the same columns of fct_judge_ratings."""
    if not _has_table(con, "warehouse", "int_load_scope") or "facts_built_by" not in {
        c[0] for c in _columns(con, "warehouse", "int_load_scope")
    }:
        return None
    loads = con.execute(
        "select load_id, facts_built_by, needs_full, list_contains(facts_done, ?) "
        "from warehouse.main.int_load_scope order by load_number desc limit 2",
        [APPENDED],
    ).fetchall()
    if not loads or loads[0][1] is None:
        return None
    current = LoadState(loads[0][0], loads[0][1])
    whole = AppendPlan(current, None, 0)
    if loads[0][2] or not loads[0][3] or len(loads) < 2 or loads[1][1] is None:
        return whole
    if not bi_path.exists():
        return whole
    try:
        con.execute(f"attach {_literal(str(bi_path))} as published (read_only)")
    except duckdb.Error:
        return whole
    try:
        if not _has_table(con, "published", SNAPSHOT_LOAD) or not _has_table(
            con, "published", APPENDED
        ):
            return whole
        held = con.execute(
            f"select load_id, facts_built_by, appended_loads from published.main.{SNAPSHOT_LOAD}"
        ).fetchall()
        previous = LoadState(loads[1][0], loads[1][1])
        if (
            len(held) != 1
            or LoadState(held[0][0], held[0][1]) != previous
            or held[0][2] + 1 >= MAX_APPENDS
            or _columns(con, "published", APPENDED) != _columns(con, "warehouse", APPENDED)
        ):
            return whole
        return AppendPlan(current, previous, held[0][2] + 1)
    finally:
        con.execute("detach published")


def _append_facts(con: duckdb.DuckDBPyConnection) -> bool:
    """In the copied snapshot (attached as ``snapshot``, the warehouse as
    ``warehouse``): replace fct_judge_ratings' rows of the prompts and runs the load
    recomputed (the view RECOMPUTED_FACTS, the dbt models' condition; rows of no
    prompt are always recomputed) with the warehouse's. True when the row counts then
    agree; False when they do not (a prompt and run the load left without a fact,
    every re-sent rating of it now rejected, keeps its old rows here; or the published
    file was not the load before's): the caller copies whole."""
    table = f"snapshot.main.{APPENDED}"
    recomputed = f"warehouse.main.{RECOMPUTED_FACTS}"
    con.execute(
        f"delete from {table} where prompt_id is null "
        f"or (prompt_id, run_id) in (select prompt_id, run_id from {recomputed})"
    )
    con.execute(f"insert into {table} select * from {recomputed}")
    got = con.execute(f"select count(*) from {table}").fetchall()
    want = con.execute(f"select count(*) from warehouse.main.{APPENDED}").fetchall()
    return got == want


def copy_marts(
    db_path: Path,
    bi_path: Path,
    tables: list[str] | dict[str, MartDocs],
    stop: CopyStop | None = None,
    on_load: bool = False,
) -> Path:
    """The first half of publish_snapshot: copy ``tables`` from the warehouse into a
    new temporary file beside ``bi_path`` (storage version STORAGE_VERSION; with
    MartDocs, their descriptions as comments) and return it, not yet published. It
    only reads the warehouse, so it can run beside the validation suites (the build
    does: finish_snapshot publishes it once they pass, discard_snapshot removes it
    when they fail; ``stop`` stops it from another thread). ``on_load``: an
    incremental build's, the published snapshot is appended to when it can be
    (_append_plan), and the new one names its load (table snapshot_load)."""
    stop = stop or CopyStop()
    bi_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_path(bi_path, os.getpid())
    discard_snapshot(tmp)
    docs = tables if isinstance(tables, dict) else dict.fromkeys(tables, MartDocs())
    with _writing(tmp, stop) as con:
        con.execute(f"set disabled_compression_methods = {_literal(UNUSED_COMPRESSION)}")
        con.execute(f"attach {_literal(str(db_path))} as warehouse (read_only)")
        plan = _append_plan(con, bi_path) if on_load else None
        append = plan is not None and plan.previous is not None and APPENDED in docs
        if append:
            shutil.copyfile(bi_path, tmp)  # the published file is not changed
            con.execute(f"attach {_literal(str(tmp))} as snapshot")
            for kind, held in con.execute(
                "select 'view', view_name from duckdb_views() where database_name = "
                "'snapshot' and schema_name = 'main' and not internal union all "
                "select 'table', table_name from duckdb_tables() where database_name = "
                "'snapshot' and schema_name = 'main' and table_name <> ? order by 1 desc",
                [APPENDED],
            ).fetchall():
                con.execute(f"drop {kind} snapshot.main.{_ident(held)}")
            stop.check()
            append = _append_facts(con)
            if not append:  # copied whole instead
                assert plan is not None
                con.execute("detach snapshot")
                tmp.unlink()
                plan = AppendPlan(plan.current, None, 0)
        if not append:
            con.execute(
                f"attach {_literal(str(tmp))} as snapshot "
                f"(storage_version {_literal(STORAGE_VERSION)})"
            )
        views = _warehouse_views(con, docs)
        for table in docs:
            stop.check()
            if table not in views and not (append and table == APPENDED):
                _copy_table(con, table)
        con.execute("detach warehouse")
        # after the tables they read, and with the warehouse detached: a view binds to
        # the snapshot's own tables or fails, and is then copied as a table
        unbound = _create_views(con, views)
        if unbound:
            con.execute(f"attach {_literal(str(db_path))} as warehouse (read_only)")
            for table in unbound:
                stop.check()
                _copy_table(con, table)
            con.execute("detach warehouse")
        for table, table_docs in docs.items():
            _comment(con, table, table_docs)
        if plan is not None:
            _mark_load(con, plan)
        con.execute("detach snapshot")
    return tmp


def _copy_table(con: duckdb.DuckDBPyConnection, table: str) -> None:
    name = _ident(table)
    con.execute(f"create table snapshot.main.{name} as select * from warehouse.main.{name}")


# a view's SQL that reads files, not tables: a table function (read_parquet,
# parquet_scan, read_csv_auto, glob, ...) or a file named as a table (from 'x.csv',
# which DuckDB stores as the identifier "x.csv": a dot or slash inside the quotes)
READS_FILES = re.compile(
    r"\b(?:read_\w+|\w+_scan|glob|sniff_csv)\s*\("
    r"""|\b(?:from|join)\s+(?:'|"[^"]*[./\\][^"]*")""",
    re.IGNORECASE,
)


def _warehouse_views(con: duckdb.DuckDBPyConnection, docs: dict[str, MartDocs]) -> dict[str, str]:
    """The marts the warehouse holds as views over its tables (debiased_scores on
    DuckDB), by name, with the SQL that creates them (DuckDB's, schema-qualified
    without the catalog). A view over files (the Spark route hands its marts over as
    views over Parquet files: spark.parquet_sql) is copied as a table: as a view the
    snapshot would read files outside it, and bind anywhere."""
    rows = con.execute(
        "select view_name, sql from duckdb_views() where database_name = 'warehouse' "
        "and schema_name = 'main' and not internal"
    ).fetchall()
    return {name: sql for name, sql in rows if name in docs and not READS_FILES.search(sql)}


def _create_views(con: duckdb.DuckDBPyConnection, views: dict[str, str]) -> list[str]:
    """Create ``views`` in the snapshot (its current catalog while they are created) over
    the snapshot's own tables, a view before another only where it reads it; return
    those that do not bind there (a view reading a table that is not a mart), to be
    copied as tables. A view costs the snapshot nothing to write: debiased_scores
    (one row per rating, a join of fct_judge_ratings to bias_estimates' main terms)
    was 10M rows and ~12 of the copy's ~28 CPU s at 10M ratings."""
    pending = dict(views)
    con.execute("use snapshot")
    try:
        while pending:
            done = []
            for name, sql in pending.items():
                try:
                    con.execute(sql)
                except (duckdb.CatalogException, duckdb.BinderException):
                    continue
                done.append(name)
            if not done:
                break
            for name in done:
                del pending[name]
    finally:
        con.execute("use memory")
    return list(pending)


def _mark_load(con: duckdb.DuckDBPyConnection, plan: AppendPlan) -> None:
    """The snapshot's table snapshot_load: the state it holds (see _append_plan)."""
    name = f"snapshot.main.{SNAPSHOT_LOAD}"
    con.execute(
        f"create table {name} (load_id varchar, facts_built_by varchar, appended_loads integer)"
    )
    con.execute(
        f"insert into {name} values (?, ?, ?)",
        [plan.current.load_id, plan.current.facts_built_by, plan.appended],
    )
    con.execute(f"comment on table {name} is {_literal(SNAPSHOT_LOAD_COMMENT)}")


@contextlib.contextmanager
def _writing(tmp: Path, stop: CopyStop | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory connection that writes the temporary snapshot ``tmp``, closed at
    the end; on an error (or a kill's KeyboardInterrupt, or ``stop``) ``tmp`` is
    removed too."""
    con = duckdb.connect()
    try:
        if stop is not None:
            stop.running(con)
        yield con
    except BaseException:
        if stop is not None:
            stop.running(None)
        con.close()
        discard_snapshot(tmp)
        raise
    if stop is not None:
        stop.running(None)
    con.close()


def discard_snapshot(tmp: Path) -> None:
    """Remove a temporary snapshot (copy_marts's) and its WAL file."""
    tmp.unlink(missing_ok=True)
    tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


def finish_snapshot(tmp: Path, bi_path: Path, validation: dict[str, Any] | None = None) -> Path:
    """The second half of publish_snapshot: with ``validation`` (the validation
    record), add the table snapshot_validation to copy_marts's ``tmp``, then rename it
    to ``bi_path``. The file keeps the storage version it was created in."""
    if validation is not None:
        with _writing(tmp) as con:
            con.execute(f"attach {_literal(str(tmp))} as snapshot")
            con.execute(f"create table snapshot.main.{SNAPSHOT_VALIDATION} (record varchar)")
            con.execute(
                f"insert into snapshot.main.{SNAPSHOT_VALIDATION} values (?)",
                [json.dumps(validation)],
            )
            con.execute(
                f"comment on table snapshot.main.{SNAPSHOT_VALIDATION} "
                f"is {_literal(SNAPSHOT_VALIDATION_COMMENT)}"
            )
            con.execute("detach snapshot")
    os.replace(tmp, bi_path)  # atomic on POSIX: readers see the old or the new file
    return bi_path


def publish_snapshot(
    db_path: Path,
    bi_path: Path,
    tables: list[str] | dict[str, MartDocs],
    validation: dict[str, Any] | None = None,
) -> Path:
    """Copy ``tables`` from the warehouse into a new file (storage version
    STORAGE_VERSION; with MartDocs, their descriptions as comments) and rename it to
    ``bi_path``; with ``validation`` (the validation record), the table
    snapshot_validation too."""
    return finish_snapshot(copy_marts(db_path, bi_path, tables), bi_path, validation)
