"""Older DuckDB clients for the BI snapshot's tests: a Python duckdb of a given
version in its own virtualenv, and the Node client (@duckdb/node-api), each
installed once from the package registry into target/old-clients/<client>-<version>
and reused by later runs. The install goes to a temporary folder renamed into
place, so an interrupted one leaves no half-installed cache. A test skips (with the
reason) only when the registry cannot be reached; any other install failure fails.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from judge_bias.warehouse.build import PROJECT_DIR

CACHE = PROJECT_DIR / "target" / "old-clients"
# what pip and npm print when the registry cannot be reached (no network, no DNS)
UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name "
    r"resolution|Network is unreachable|ConnectTimeout|Could not fetch URL|ProxyError"
    r"|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|ECONNRESET"
)

# One JSON document describing what a client sees in the snapshot: its version,
# each table's and view's kind, rows, comment and columns (type, comment), and
# bias_estimates' rows; the Python reader also counts each view's rows with the
# snapshot ATTACHed under another name (null when that fails: DuckDB 1.0 and 1.1).
RELATIONS = (
    "select table_name as name, comment, 'table' as kind from duckdb_tables() "
    "where not internal union all select view_name, comment, 'view' from duckdb_views() "
    "where not internal"
)
PY_READER = f"""
import json, sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
q = lambda sql: con.execute(sql).fetchall()
tables = {{t: {{"comment": c, "kind": k, "rows": q(f'select count(*) from "{{t}}"')[0][0],
              "columns": {{}}}} for t, c, k in q("{RELATIONS}")}}
for t, col, typ, c in q("select table_name, column_name, data_type, comment "
                        "from duckdb_columns() where not internal order by column_index"):
    tables[t]["columns"][col] = [typ, c]
rows = q("select to_json(b)::varchar from bias_estimates as b order by all")
con.close()
other = duckdb.connect()
other.execute(f"attach '{{sys.argv[1]}}' as bi_alias (read_only)")
attached = {{}}
for t, v in tables.items():
    if v["kind"] == "view":
        try:
            attached[t] = other.execute(f'select count(*) from bi_alias."{{t}}"').fetchall()[0][0]
        except duckdb.Error:
            attached[t] = None
print(json.dumps({{"version": duckdb.__version__, "tables": tables, "attached_views": attached,
                  "bias_estimates": [json.loads(r[0]) for r in rows]}}))
"""

NODE_READER = """
const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(process.argv[2], { access_mode: 'READ_ONLY' });
  const con = await db.connect();
  const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const tables = {};
  for (const t of await q("RELATIONS")) {
    const n = await q(`select count(*) as n from "${t.name}"`);
    tables[t.name] = { comment: t.comment, kind: t.kind, rows: Number(n[0].n), columns: {} };
  }
  for (const c of await q("select table_name, column_name, data_type, comment " +
                          "from duckdb_columns() where not internal order by column_index")) {
    tables[c.table_name].columns[c.column_name] = [c.data_type, c.comment];
  }
  const rows = await q("select to_json(b)::varchar as j from bias_estimates as b order by all");
  const version = (await q("select version() as v"))[0].v;
  const estimates = rows.map((r) => JSON.parse(r.j));
  console.log(JSON.stringify({ version, tables, bias_estimates: estimates }));
})().catch((e) => { console.error(String(e)); process.exit(1); });
""".replace("RELATIONS", RELATIONS)


def _install(name: str, steps: list[list[str]], files: dict[str, str] | None = None) -> Path:
    """Write ``files`` and run ``steps`` (each may use {dir}) in a fresh folder, then
    move it to CACHE/name; reuse CACHE/name when a previous run completed it."""
    done = CACHE / name
    if (done / ".complete").exists():
        return done
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=CACHE))
    try:
        for file, text in (files or {}).items():
            (work / file).write_text(text, encoding="utf-8")
        for step in steps:
            cmd = [part.replace("{dir}", str(work)) for part in step]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=work)
            if run.returncode != 0:
                out = run.stdout + run.stderr
                if UNREACHABLE.search(out):
                    pytest.skip(f"the package registry is unreachable: {out.strip()[-300:]}")
                pytest.fail(f"installing {name} failed: {' '.join(cmd)}\n{out[-2000:]}")
        (work / ".complete").touch()
        shutil.rmtree(done, ignore_errors=True)
        work.rename(done)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return done


def duckdb_python(version: str) -> Path:
    """The Python of a virtualenv holding duckdb ``version``."""
    venv = _install(
        f"duckdb-{version}",
        [
            [sys.executable, "-m", "venv", "{dir}"],
            ["{dir}/bin/python", "-m", "pip", "install", "--quiet", f"duckdb=={version}"],
        ],
    )
    return venv / "bin" / "python"


def node_client(version: str) -> Path:
    """A folder whose node_modules holds @duckdb/node-api ``version``."""
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("node and npm are not installed: the Node client cannot be tested")
    return _install(
        f"node-api-{version}",
        [["npm", "install", "--no-audit", "--no-fund", f"@duckdb/node-api@{version}"]],
        files={"package.json": '{"name": "snapshot-reader", "private": true}\n'},
    )


def read_with_python(python: Path, db: Path) -> dict:
    """What duckdb at ``python`` sees in ``db`` (PY_READER's document)."""
    run = subprocess.run(
        [str(python), "-c", PY_READER, str(db)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def read_with_node(folder: Path, db: Path) -> dict:
    """What @duckdb/node-api in ``folder`` sees in ``db`` (NODE_READER's document)."""
    script = folder / "read_snapshot.cjs"
    script.write_text(NODE_READER, encoding="utf-8")
    run = subprocess.run(
        ["node", str(script), str(db)], capture_output=True, text=True, timeout=300, cwd=folder
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)
