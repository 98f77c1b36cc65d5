"""The BI snapshot: published only after validation, atomically, never blocking."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse.build import BuildResult
from judge_bias.warehouse.provenance import SNAPSHOT_VALIDATION, VALIDATION_FAILED, BuildRecord
from judge_bias.warehouse.snapshot import (
    SNAPSHOT_LOAD,
    SNAPSHOT_VALIDATION_COMMENT,
    STORAGE_VERSION,
    CopyStop,
    MartDocs,
    copy_marts,
    mart_docs,
    publish_snapshot,
)
from judge_bias.warehouse.validation import Finding, ValidationReport
from tests.conftest import DEMO_DIR
from tests.old_clients import (
    RELATIONS,
    duckdb_python,
    node_client,
    read_with_node,
    read_with_python,
)

pytestmark = pytest.mark.dbt

READER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
count = lambda c: c.execute("select count(*) from fct_judge_ratings").fetchall()[0][0]
print(count(con), flush=True)
sys.stdin.readline()  # the build runs meanwhile
print(count(con), flush=True)
con.close()
print(count(duckdb.connect(sys.argv[1], read_only=True)), flush=True)
"""


def _ratings_without_last_rows(data: Path, n: int) -> None:
    path = data / "judge_ratings.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-n]), encoding="utf-8")


def test_reader_keeps_old_snapshot_during_build_and_sees_new_on_reconnect(
    demo_build: BuildResult, demo_copy: Path, tmp_path: Path
) -> None:
    # the first build: a copy of the session's demo build (the same data and settings
    # as building demo_copy here), its warehouse and published snapshot
    db, bi = tmp_path / "w.duckdb", tmp_path / "bi.duckdb"
    assert demo_build.bi_path is not None
    shutil.copyfile(demo_build.db_path, db)
    shutil.copyfile(demo_build.bi_path, bi)
    tables = {
        r[0] for r in duckdb.connect(str(bi), read_only=True).execute("show tables").fetchall()
    }
    assert {"fct_judge_ratings", "bias_estimates", "rejected_rows"} <= tables
    assert not any(t.startswith(("base_", "stg_", "int_")) for t in tables)

    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(bi)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        before = int(reader.stdout.readline())
        _ratings_without_last_rows(demo_copy, 60)
        second = build_mod.build(demo_copy, db, quiet=True, bi_path=bi)  # must not fail
        assert second.validation.success
        assert second.bi_path == bi and bi.exists()  # published where it was told
        out, _ = reader.communicate("go\n", timeout=60)
    finally:
        reader.kill()
    during, after = map(int, out.split())
    assert during == before  # the open connection still reads the old snapshot
    assert after == before - 60  # a new connection sees the new one


def test_failed_validation_does_not_publish(
    demo_build: BuildResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed validation publishes nothing: validate_and_publish, the end of every
    route to a published warehouse (judge-bias build after its dbt phases, and
    judge-bias validate --publish), with the suites failing, on a copy of the
    session's demo build and its published snapshot. (A whole build of the demo
    here ran dbt for ~50 CPU s to reach this same call; test_build_outcome keeps
    the whole build's failed routes.)"""
    db, bi = tmp_path / "w.duckdb", tmp_path / "bi.duckdb"
    assert demo_build.bi_path is not None
    shutil.copyfile(demo_build.db_path, db)
    shutil.copyfile(demo_build.bi_path, bi)
    published = bi.read_bytes()
    failing = ValidationReport(
        [Finding("marts", "fct_judge_ratings", "expect_x", "judge", "critical", False)]
    )
    monkeypatch.setattr(build_mod, "validate", lambda _db, _on_load=False: failing)
    record = BuildRecord(db, DEMO_DIR, bi)
    manifest = build_mod.target_dir(demo_build.db_path) / "manifest.json"
    result = build_mod.validate_and_publish(db, DEMO_DIR, bi, record, manifest)
    assert result.bi_path is None
    assert bi.read_bytes() == published
    assert not list(tmp_path.glob(".bi.duckdb.*.tmp*"))
    assert (record.state, record.stage) == (VALIDATION_FAILED, "validation")


def test_validation_that_raises_leaves_no_copy(
    demo_build: BuildResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot's copy runs beside the suites: when they raise, the error goes
    through, the copy is waited for and removed, the published snapshot is kept."""
    db, bi = tmp_path / "w.duckdb", tmp_path / "bi.duckdb"
    assert demo_build.bi_path is not None
    shutil.copyfile(demo_build.db_path, db)
    shutil.copyfile(demo_build.bi_path, bi)
    published = bi.read_bytes()

    def broken(_db: Path, _on_load: bool = False) -> ValidationReport:
        raise RuntimeError("suites broke")

    monkeypatch.setattr(build_mod, "validate", broken)
    record = BuildRecord(db, DEMO_DIR, bi)
    manifest = build_mod.target_dir(demo_build.db_path) / "manifest.json"
    with pytest.raises(RuntimeError, match="suites broke"):
        build_mod.validate_and_publish(db, DEMO_DIR, bi, record, manifest)
    assert bi.read_bytes() == published
    assert not list(tmp_path.glob(".bi.duckdb.*.tmp*"))


def test_an_interrupt_stops_the_copy_and_removes_it(tmp_path: Path) -> None:
    """The copy runs in a thread, which gets no KeyboardInterrupt: stopping it (as
    validate_and_publish does when it is interrupted or the suites fail) interrupts
    the statement running, so a kill's grace period is not spent waiting for a long
    copy, and its file is removed. Without CopyStop.stop the copy of this table runs
    to its end and the file stays until the copy is discarded."""
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute(  # its copy takes ~3 s
        "create table big as select range as a, hash(range) as b, "
        "(range * 7919) % 1000003 as c from range(50000000)"
    )
    con.close()
    stop = CopyStop()
    with ThreadPoolExecutor(1) as pool:
        copying = pool.submit(copy_marts, db, tmp_path / "bi.duckdb", ["big"], stop)
        time.sleep(0.3)
        assert not copying.done()
        started = time.monotonic()
        stop.stop()
        error = copying.exception()
    assert time.monotonic() - started < 2.0
    assert isinstance(error, (InterruptedError, duckdb.InterruptException))
    assert not list(tmp_path.glob(".bi.duckdb.*.tmp*"))
    with pytest.raises(InterruptedError):  # stopped before it starts: nothing copied
        copy_marts(db, tmp_path / "bi.duckdb", ["big"], stop)
    assert not list(tmp_path.glob(".bi.duckdb.*.tmp*"))


# The DuckDB clients BI tools embed: Python (SQLAlchemy's duckdb-engine, Superset)
# at the oldest and newest 1.x minor versions we test, and the Node client.
OLD_PYTHON_CLIENTS = ("1.1.3", "1.4.5")
NODE_CLIENT = "1.5.6-r.1"
# Every type the marts' columns hold today, all read by DuckDB 1.x clients from a
# v1.0.0 file; a new type (VARIANT fails the publish; BIGNUM and GEOMETRY go through
# but read back as VARINT / raw bytes in 1.x) must be checked here first.
PORTABLE_TYPES = {"VARCHAR", "DOUBLE", "BIGINT", "INTEGER", "BOOLEAN", "HUGEINT", "JSON"}


def _newest_view(bi: Path) -> dict:
    """The snapshot as this project's duckdb sees it (tables and views, comments, types)."""
    con = duckdb.connect(str(bi), read_only=True)
    try:
        q = con.execute
        tables = {
            t: {"comment": c, "kind": k, "rows": q(f'select count(*) from "{t}"').fetchall()[0][0]}
            for t, c, k in q(RELATIONS).fetchall()
        }
        for t, col, typ, c in q(
            "select table_name, column_name, data_type, comment from duckdb_columns() "
            "where not internal order by column_index"
        ).fetchall():
            tables[t].setdefault("columns", {})[col] = [typ, c]
        rows = q("select to_json(b)::varchar from bias_estimates as b order by all").fetchall()
        return {"tables": tables, "bias_estimates": [json.loads(r[0]) for r in rows]}
    finally:
        con.close()


def _same_rows(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.keys() == w.keys()
        for key, value in w.items():
            if isinstance(value, float):
                assert g[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
            else:
                assert g[key] == value, key


def _assert_client_reads(seen: dict, want: dict, manifest: dict[str, MartDocs]) -> None:
    """An older client sees every mart with its kind (debiased_scores a view), rows,
    types and comments."""
    # every mart, and the snapshot's own validation record (not a dbt model)
    marts = set(manifest) | {SNAPSHOT_VALIDATION}
    assert set(seen["tables"]) == marts == set(want["tables"])
    record = seen["tables"][SNAPSHOT_VALIDATION]
    assert record["rows"] == 1 and record["comment"] == SNAPSHOT_VALIDATION_COMMENT
    for table, docs in manifest.items():
        got, ref = seen["tables"][table], want["tables"][table]
        assert got["rows"] == ref["rows"] and got["kind"] == ref["kind"], table
        assert got["comment"] == docs.description, table
        assert list(got["columns"]) == list(ref["columns"]), table
        for column, (typ, comment) in got["columns"].items():
            assert typ in (ref["columns"][column][0], "VARINT"), (table, column, typ)
            assert comment == (docs.columns.get(column) or None), (table, column)
    _same_rows(seen["bias_estimates"], want["bias_estimates"])


@pytest.fixture(scope="module")
def demo_snapshot(demo_build: BuildResult) -> tuple[Path, dict, dict[str, MartDocs]]:
    bi = demo_build.bi_path
    assert bi is not None
    manifest = mart_docs(build_mod.target_dir(demo_build.db_path) / "manifest.json")
    return bi, _newest_view(bi), manifest


def _header_version(path: Path) -> int:
    """The storage number in a DuckDB file's main header (after an 8-byte checksum
    and the magic bytes DUCK): 64 is the format of DuckDB 0.10 to 1.x, the one every
    1.x client reads ("we can only read version 64" / "between 64 and 67")."""
    data = path.read_bytes()[:20]
    assert data[8:12] == b"DUCK"
    return struct.unpack_from("<Q", data, 12)[0]


def test_snapshot_storage_version_types_and_comments(demo_snapshot) -> None:
    bi, view, manifest = demo_snapshot
    assert _header_version(bi) == 64
    types = {typ for t in view["tables"].values() for typ, _ in t["columns"].values()}
    assert types <= PORTABLE_TYPES, types - PORTABLE_TYPES
    # every mart and every column the YAML documents carries its description
    for table, docs in manifest.items():
        assert view["tables"][table]["comment"] == docs.description
        for column, text in docs.columns.items():
            assert view["tables"][table]["columns"][column][1] == (text or None)


@pytest.mark.parametrize("version", OLD_PYTHON_CLIENTS)
def test_old_python_duckdb_opens_snapshot(demo_snapshot, version: str) -> None:
    """Each client queries the views in the file it opened; with the file ATTACHed
    under another name, 1.1 binds a view's tables in its default catalog and fails
    (the limit snapshot.py names), later clients read it."""
    bi, view, manifest = demo_snapshot
    seen = read_with_python(duckdb_python(version), bi)
    assert seen["version"] == version
    _assert_client_reads(seen, view, manifest)
    views = {t: v["rows"] for t, v in view["tables"].items() if v["kind"] == "view"}
    assert "debiased_scores" in views
    attached = views if version >= "1.2" else dict.fromkeys(views)
    assert seen["attached_views"] == attached


def test_snapshot_views_equal_the_warehouse(demo_build: BuildResult) -> None:
    """The snapshot's debiased_scores is a view over the snapshot's own tables, and its
    rows equal the warehouse's debiased_scores exactly (a multiset: EXCEPT ALL both
    ways). Fails when the view is copied as a table, or reads another table."""
    assert demo_build.bi_path is not None
    with duckdb.connect() as con:
        con.execute(f"attach '{demo_build.db_path}' as w (read_only)")
        con.execute(f"attach '{demo_build.bi_path}' as bi (read_only)")
        views = con.execute(
            "select view_name from duckdb_views() where database_name = 'bi' and not internal"
        ).fetchall()
        assert views == [("debiased_scores",)]
        n = con.execute("select count(*) from bi.debiased_scores").fetchall()[0][0]
        assert n == con.execute("select count(*) from w.fct_judge_ratings").fetchall()[0][0] > 0
        for a, b in (("w", "bi"), ("bi", "w")):
            extra = (
                f"select * from {a}.debiased_scores except all select * from {b}.debiased_scores"
            )
            assert con.execute(f"select count(*) from ({extra})").fetchall() == [(0,)]


def test_a_view_that_reads_no_mart_is_copied_as_a_table(tmp_path: Path) -> None:
    """A mart the warehouse holds as a view is a view in the snapshot when its SQL
    binds to the snapshot's tables (here also over another such view, created after
    it), and a table with the same rows when it reads a table that is not a mart.
    Fails without the fallback (the publish raises) or when views bind to the
    warehouse (the snapshot's view then reads a table it lacks)."""
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table facts as select range as x from range(5)")
        con.execute("create table int_hidden as select range as y from range(3)")
        con.execute("create view z_doubled as select x * 2 as x2 from main.facts")
        con.execute("create view a_of_view as select x2 + 1 as x3 from main.z_doubled")
        con.execute("create view from_hidden as select y from main.int_hidden")
    marts = ["facts", "z_doubled", "a_of_view", "from_hidden"]
    bi = publish_snapshot(db, tmp_path / "bi.duckdb", marts)
    with duckdb.connect(str(bi), read_only=True) as con:
        kinds = dict(con.execute(f"select name, kind from ({RELATIONS})").fetchall())
        rows = {t: sorted(con.execute(f"select * from {t}").fetchall()) for t in marts}
    assert kinds == {"facts": "table", "z_doubled": "view", "a_of_view": "view",
                     "from_hidden": "table"}  # fmt: skip
    assert rows["a_of_view"] == [(1,), (3,), (5,), (7,), (9,)]
    assert rows["from_hidden"] == [(0,), (1,), (2,)]


def test_a_view_over_files_is_copied_as_a_table(tmp_path: Path) -> None:
    """A mart the warehouse holds as a view over files (the Spark route's hand-over:
    read_parquet of its export) is a table in the snapshot: as a view it would read
    files outside the snapshot (and bind with the warehouse detached)."""
    db = tmp_path / "w.duckdb"
    parquet = tmp_path / "facts.parquet"
    with duckdb.connect(str(db)) as con:
        con.execute(f"copy (select range as x from range(4)) to '{parquet}' (format parquet)")
        con.execute(f"create view facts as select * from read_parquet(['{parquet}'])")
        con.execute(f"create view named as select * from '{parquet}'")
        con.execute("create view doubled as select x * 2 as x2 from main.facts")
    marts = ["facts", "named", "doubled"]
    bi = publish_snapshot(db, tmp_path / "bi.duckdb", marts)
    parquet.unlink()
    with duckdb.connect(str(bi), read_only=True) as con:
        kinds = dict(con.execute(f"select name, kind from ({RELATIONS})").fetchall())
        rows = {t: sorted(con.execute(f"select * from {t}").fetchall()) for t in marts}
    assert kinds == {"facts": "table", "named": "table", "doubled": "view"}
    assert rows["doubled"] == [(0,), (2,), (4,), (6,)]


def test_node_client_opens_snapshot(demo_snapshot) -> None:
    bi, view, manifest = demo_snapshot
    seen = read_with_node(node_client(NODE_CLIENT), bi)
    assert seen["version"] == "v" + NODE_CLIENT.split("-")[0]
    _assert_client_reads(seen, view, manifest)


def test_publish_comments_escape_quotes(tmp_path: Path) -> None:
    """A description with quotes and a table name needing quoting reach the
    snapshot verbatim, written in STORAGE_VERSION."""
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""create table "it's" as select 1 as "a""b", 'x' as plain""")
    con.close()
    docs = {"it's": MartDocs("O'Brien's \"table\"", {'a"b': "it's a; drop", "missing": "x"})}
    bi = publish_snapshot(db, tmp_path / "bi.duckdb", docs)
    con = duckdb.connect(str(bi), read_only=True)
    try:
        assert con.execute(
            "select comment from duckdb_tables() where table_name = 'it''s'"
        ).fetchall() == [("O'Brien's \"table\"",)]
        cols = dict(
            con.execute(
                "select column_name, comment from duckdb_columns() where table_name = 'it''s'"
            ).fetchall()
        )
        ((storage,),) = con.execute(
            "select tags['storage_version'] from duckdb_databases() "
            "where database_name = current_database()"
        ).fetchall()
    finally:
        con.close()
    assert cols == {'a"b': "it's a; drop", "plain": None}
    assert storage.startswith(STORAGE_VERSION) and _header_version(bi) == 64


def _load_warehouse(db: Path, facts: list[tuple], loads: list[tuple], touched: list[tuple]) -> None:
    """A warehouse of an incremental build, the tables the snapshot reads: the facts
    (prompt_id, run_id, score), another mart, int_load_scope and int_load_prompts."""
    with duckdb.connect(str(db)) as con:
        con.execute("create or replace table fct_judge_ratings "
                    "(prompt_id varchar, run_id varchar, score double)")  # fmt: skip
        con.executemany("insert into fct_judge_ratings values (?, ?, ?)", facts)
        con.execute("create or replace view debiased_scores as select prompt_id, "
                    "score + 1 as debiased from main.fct_judge_ratings")  # fmt: skip
        scope = "load_id varchar, load_number integer, needs_full boolean, facts_done varchar[]"
        con.execute(f"create or replace table int_load_scope ({scope}, facts_built_by varchar)")
        con.executemany("insert into int_load_scope values (?, ?, ?, ?, ?)", loads)
        con.execute("create or replace table int_load_prompts (prompt_id varchar, run_id varchar)")
        for row in touched:
            con.execute("insert into int_load_prompts values (?, ?)", row)
        # the dbt view int_load_recomputed_facts (macro load_prompt_condition), as SQL
        last = "(select arg_max(load_id, load_number) from int_load_scope)"
        con.execute(
            "create or replace view int_load_recomputed_facts as select * from fct_judge_ratings "
            f"where (select needs_full from int_load_scope where load_id = {last}) "
            "or prompt_id is null "
            "or prompt_id in (select prompt_id from int_load_prompts where run_id is null) "
            "or (prompt_id, run_id) in (select prompt_id, run_id from int_load_prompts)"
        )


def _snapshot_rows(bi: Path) -> dict[str, list]:
    with duckdb.connect(str(bi), read_only=True) as con:
        return {
            t: sorted(con.execute(f'select * from "{t}"').fetchall(), key=str)
            for (t, _, _) in con.execute(RELATIONS).fetchall()
        }


def test_an_incremental_load_appends_to_the_snapshot_of_the_load_before(tmp_path: Path) -> None:
    """On a load (copy_marts on_load), the snapshot published after the load before is
    copied and fct_judge_ratings' recomputed rows replaced: equal to a whole copy, the
    re-sent rating (p1, run 1) once with its new score. A snapshot of another state
    (the dbt command that built the facts differs), a load that recomputed every
    prompt, or no snapshot_load: copied whole. Fails when the append keeps the load's
    old rows (without the delete: the count check raises), ignores the state, or
    appends on a full recompute; and when a published file whose counts disagree after
    the append is not copied whole."""
    db, bi = tmp_path / "w.duckdb", tmp_path / "bi.duckdb"
    done = ["fct_judge_ratings"]
    first = [("p1", "1", 1.0), ("p2", "1", 2.0), ("p3", "1", 3.0), (None, "1", 9.0)]
    _load_warehouse(db, first, [("A", 1, True, done, "inv-a")], [])
    publish_snapshot(db, bi, ["fct_judge_ratings", "debiased_scores"])  # no snapshot_load
    tables = ["fct_judge_ratings", "debiased_scores"]
    finish = lambda: build_mod.finish_snapshot(copy_marts(db, bi, tables, on_load=True), bi)  # noqa: E731
    finish()  # no snapshot_load in the published file: whole, and now named
    assert _snapshot_rows(bi)[SNAPSHOT_LOAD] == [("A", "inv-a", 0)]
    # load B: run 2 of p1 and p2, p1's run 1 re-sent with another score
    second = [("p1", "1", 1.5), ("p2", "1", 2.0), ("p3", "1", 3.0), (None, "1", 9.0),
              ("p1", "2", 4.0), ("p2", "2", 5.0)]  # fmt: skip
    loads = [("A", 1, True, done, "inv-a"), ("B", 2, False, done, "inv-b")]
    _load_warehouse(db, second, loads, [("p1", "1"), ("p1", "2"), ("p2", "2")])
    finish()
    got = _snapshot_rows(bi)
    assert got[SNAPSHOT_LOAD] == [("B", "inv-b", 1)]
    with duckdb.connect(str(bi), read_only=True) as con:  # the view made again, a view
        assert con.execute("select view_name from duckdb_views() where not internal"
                           ).fetchall() == [("debiased_scores",)]  # fmt: skip
    assert got["fct_judge_ratings"] == sorted(second, key=str)
    assert got["debiased_scores"] == sorted([(p, s + 1) for p, _, s in second], key=str)
    # C: the published file is B's state, but another command built B's facts since
    loads = [*loads[:1], ("B", 2, False, done, "inv-b2"), ("C", 3, False, done, "inv-c")]
    _load_warehouse(db, second, loads, [("p3", "3")])
    finish()
    assert _snapshot_rows(bi)[SNAPSHOT_LOAD] == [("C", "inv-c", 0)]  # whole
    # D after C: appended; E recomputed every prompt: whole
    loads = [*loads, ("D", 4, False, done, "inv-d")]
    _load_warehouse(db, second, loads, [("p3", "4")])
    finish()
    assert _snapshot_rows(bi)[SNAPSHOT_LOAD] == [("D", "inv-d", 1)]
    _load_warehouse(db, second, [*loads, ("E", 5, True, done, "inv-e")], [])
    finish()
    assert _snapshot_rows(bi)[SNAPSHOT_LOAD] == [("E", "inv-e", 0)]
    assert _snapshot_rows(bi)["fct_judge_ratings"] == sorted(second, key=str)
    # a published file whose facts differ from the warehouse's before the load (here a
    # row too many; or a prompt and run the load emptied): the counts disagree after
    # the append, and the snapshot is copied whole instead
    loads = [*loads, ("E", 5, True, done, "inv-e"), ("F", 6, False, done, "inv-f")]
    _load_warehouse(db, second, loads[-2:], [("p9", "1")])
    with duckdb.connect(str(bi)) as con:
        con.execute("insert into fct_judge_ratings values ('p8', '1', 0.0)")
    finish()
    got = _snapshot_rows(bi)
    assert got[SNAPSHOT_LOAD] == [("F", "inv-f", 0)]
    assert got["fct_judge_ratings"] == sorted(second, key=str)
    assert not list(tmp_path.glob(".bi.duckdb.*.tmp*"))


def test_the_snapshots_view_reads_its_own_tables_wherever_it_is_opened(tmp_path: Path) -> None:
    """The snapshot's view (debiased_scores' kind) is made with the warehouse detached
    and the snapshot the current catalog: it reads the snapshot's own tables. Opened
    alone after the warehouse is moved away, and ATTACHed (DuckDB 2.x) beside another
    database with a same-named table of other rows, it gives the snapshot's rows. A
    mart view naming a catalog 'warehouse' (the name the copy attaches the warehouse
    under) cannot bind there, so it is a table in the snapshot. Fails when the view
    is made before the detach (it then binds to the attached warehouse: the snapshot
    alone cannot read it), or in another catalog than the snapshot's (copied as a
    table), or when its SQL names the warehouse."""
    db, other = tmp_path / "w.duckdb", tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("create table facts as select range + 100 as x from range(2)")
    with duckdb.connect(str(db)) as con:
        con.execute("create table facts as select range as x from range(3)")
        con.execute("create view doubled as select x * 2 as x2 from main.facts")
        # a view over another database attached as 'warehouse' when it was made
        con.execute(f"attach '{other}' as warehouse (read_only)")
        con.execute("create view named as select x from warehouse.main.facts")
        con.execute("detach warehouse")
    marts = ["facts", "doubled", "named"]
    bi = publish_snapshot(db, tmp_path / "bi.duckdb", marts)
    moved = tmp_path / "away"
    moved.mkdir()
    db.rename(moved / db.name)
    other.rename(moved / other.name)
    with duckdb.connect(str(bi), read_only=True) as con:
        kinds = dict(con.execute(f"select name, kind from ({RELATIONS})").fetchall())
        alone = {t: sorted(con.execute(f"select * from {t}").fetchall()) for t in marts}
    assert kinds == {"facts": "table", "doubled": "view", "named": "table"}
    # (named's rows are not asserted: copied as a table, it is read through the
    # warehouse attached as 'warehouse', whose own facts it then reads)
    assert {t: alone[t] for t in ("facts", "doubled")} == {
        "facts": [(0,), (1,), (2,)],
        "doubled": [(0,), (2,), (4,)],
    }
    # beside a database whose default catalog has its own facts (other rows)
    with duckdb.connect(str(tmp_path / "client.duckdb")) as con:
        con.execute("create table facts as select 7 as x")
        con.execute(f"attach '{bi}' as snap (read_only)")
        beside = sorted(con.execute("select * from snap.doubled").fetchall())
    assert beside == [(0,), (2,), (4,)]
