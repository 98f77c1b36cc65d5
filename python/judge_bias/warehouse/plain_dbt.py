"""``judge-bias validate --publish``: the end of ``judge-bias build`` for a warehouse
that a plain ``dbt build`` built (in this project, or in a team's project that
installs judge_bias as a dbt package).

dbt's on-run-start hook recorded the invocation in the table dbt_last_run: its data
folder (empty on the relation route) and its command-line vars. From them this
runs what judge-bias build runs after dbt: the pre-flight's warnings on that data
folder, the GLM fit warnings, the validation suites, then, only when they pass,
the BI snapshot; it writes the same build record, validation record and snapshot
(validated_by names the route). Both routes end in the same state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from judge_bias.warehouse.build import (
    DEFAULT_DB,
    PROJECT_DIR,
    BuildError,
    BuildResult,
    default_bi_path,
    preflight,
    target_dir,
    validate_and_publish,
)
from judge_bias.warehouse.provenance import FAILED, BuildRecord, read_last_run, running_build

VALIDATED_BY = "judge-bias validate --publish"


def last_dbt_run(db: Path) -> dict[str, Any]:
    """The dbt invocation that last rebuilt ``db``'s tables (table dbt_last_run);
    BuildError when no dbt command built it."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        last = read_last_run(con)
    finally:
        con.close()
    if last is None:
        raise BuildError(f"{db}: no dbt_last_run table: build it with dbt build first")
    return last


def run_data_dir(last: dict[str, Any], project: Path = PROJECT_DIR) -> Path | None:
    """The data folder of that invocation (dbt resolves a relative one against the
    project folder it runs in); None on the relation route."""
    text = last.get("data_dir") or ""
    if not text:
        return None
    path = Path(text)
    return (path if path.is_absolute() else project / path).resolve()


def run_vars(last: dict[str, Any]) -> dict[str, Any]:
    """The command-line dbt vars of that invocation (dbt_last_run.dbt_vars)."""
    text = last.get("dbt_vars") or ""
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def default_manifest(db: Path) -> Path:
    """dbt's manifest of the warehouse: beside a side warehouse when judge-bias built
    it there, else the project's target/ (where a plain dbt build writes it)."""
    side = target_dir(db) / "manifest.json"
    return side if side.exists() else PROJECT_DIR / "target" / "manifest.json"


def publish_after_dbt(
    db_path: str | Path | None = None,
    bi_path: str | Path | None = None,
    manifest: str | Path | None = None,
    project: Path = PROJECT_DIR,
) -> BuildResult:
    """Validate the warehouse a plain dbt build wrote and, when it passes, publish its
    BI snapshot; the build record and the validation record as judge-bias build
    writes them. ``manifest``: dbt's manifest.json of that build (its marts and their
    docs; default: default_manifest); ``project``: the dbt project folder it ran in
    (a relative data_dir is relative to it)."""
    db = Path(db_path).resolve() if db_path else PROJECT_DIR / DEFAULT_DB
    if not db.is_file():
        raise FileNotFoundError(f"--db {db}: no warehouse there; build it with dbt build first")
    bi = Path(bi_path).resolve() if bi_path else default_bi_path(db)
    manifest_path = Path(manifest).resolve() if manifest else default_manifest(db)
    if not manifest_path.is_file():
        raise FileNotFoundError(
            f"{manifest_path}: no dbt manifest; give dbt's target folder with --target-path"
        )
    if other := running_build(db):
        raise BuildError(
            f"a judge-bias build (PID {other['pid']}, started {other['started_at']}) is "
            f"running on {db}; wait for it to finish"
        )
    last = last_dbt_run(db)
    data = run_data_dir(last, project)
    record = BuildRecord(db, data, bi)
    record.write()
    try:
        record.warnings = preflight(data, run_vars(last)) if data is None or data.is_dir() else []
        for warning in record.warnings:
            print(f"warning: {warning}", flush=True)
        return validate_and_publish(db, data, bi, record, manifest_path, VALIDATED_BY)
    except BaseException as exc:
        record.finish(FAILED, " ".join(str(exc).split()) or type(exc).__name__)
        raise
