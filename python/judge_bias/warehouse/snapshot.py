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
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from typing import Any

import duckdb

from judge_bias.warehouse.provenance import SNAPSHOT_VALIDATION, pid_alive


def mart_tables(manifest_path: Path) -> list[str]:
    """Names of the models under models/marts/, from dbt's manifest."""
    manifest = json.loads(manifest_path.read_text())
    return sorted(
        node["name"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["path"].startswith("marts/")
    )


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


def publish_snapshot(
    db_path: Path, bi_path: Path, tables: list[str], validation: dict[str, Any] | None = None
) -> Path:
    """Copy ``tables`` from the warehouse into a new file and rename it to ``bi_path``;
    with ``validation`` (the validation record), the table snapshot_validation too."""
    bi_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_path(bi_path, os.getpid())
    tmp.unlink(missing_ok=True)
    source = str(db_path).replace("'", "''")
    con = duckdb.connect(str(tmp))
    try:
        con.execute(f"attach '{source}' as warehouse (read_only)")
        for table in tables:
            name = '"' + table.replace('"', '""') + '"'
            con.execute(f"create table main.{name} as select * from warehouse.main.{name}")
        con.execute("detach warehouse")
        if validation is not None:
            con.execute(f"create table main.{SNAPSHOT_VALIDATION} (record varchar)")
            con.execute(
                f"insert into main.{SNAPSHOT_VALIDATION} values (?)", [json.dumps(validation)]
            )
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        raise
    con.close()
    os.replace(tmp, bi_path)  # atomic on POSIX: readers see the old or the new file
    return bi_path
