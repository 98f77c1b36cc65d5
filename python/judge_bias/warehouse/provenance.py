"""What the warehouse's tables can be trusted for: two JSON records beside the
warehouse and one table in it.

- ``<db stem>.validation.json``: the last validation's result (by ``judge-bias
  build`` or ``judge-bias validate``), with the dbt invocation it validated.
- ``<db stem>.build.json``: the outcome of the last ``judge-bias build``,
  written when it starts (state ``running``) and when it ends (``ok``,
  ``failed``, ``validation_failed``), with the stage it reached.
- ``dbt_last_run`` (table, written by the on-run-start hook of every dbt
  command that rebuilds tables): the invocation that last wrote the tables.
  A validation record naming another invocation is stale: the tables were
  rebuilt (a plain ``dbt build``, or a build that failed) after it.

Kept apart from validation.py so that reading them does not import Great
Expectations.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    from judge_bias.warehouse.validation import ValidationReport

# Build states and the stages a build goes through, in order.
RUNNING, OK, FAILED, VALIDATION_FAILED = "running", "ok", "failed", "validation_failed"
# ("dbt build" twice on DuckDB: the inputs and the gate marts, the "input gates"
# checked on them, then the rest of the DAG)
STAGES = ("checking inputs", "dbt build", "input gates", "validation", "publishing", "done")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _write_json(path: Path, record: dict[str, Any]) -> Path:
    """Write by rename: a build killed while writing leaves the old record whole."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def validation_path(db_path: str | Path) -> Path:
    """The validation record written beside the warehouse."""
    db = Path(db_path)
    return db.with_name(f"{db.stem}.validation.json")


def build_record_path(db_path: str | Path) -> Path:
    """The record of the last judge-bias build, beside the warehouse."""
    db = Path(db_path)
    return db.with_name(f"{db.stem}.build.json")


def write_validation_record(
    db_path: Path,
    data_dir: Path | str | None,
    report: ValidationReport,
    bi_path: Path | None,
    validated_by: str = "judge-bias build",
) -> Path:
    """Store the validation result beside the warehouse."""
    record = validation_record(db_path, data_dir, report, bi_path, validated_by)
    return _write_json(validation_path(db_path), record)


def validation_record(
    db_path: Path,
    data_dir: Path | str | None,
    report: ValidationReport,
    bi_path: Path | None,
    validated_by: str = "judge-bias build",
) -> dict[str, Any]:
    """The validation record of ``report`` (what write_validation_record stores)."""
    return {
        "validated_at": _now(),
        "validated_by": validated_by,
        "database": str(db_path),
        "data_dir": str(data_dir) if data_dir else None,
        # the relation route (docs/dbt-package.md): the input kinds read from relations
        "input_relations": report.input_relations.split(",") if report.input_relations else [],
        "dbt_invocation_id": report.dbt_invocation_id,
        "dbt_vars": _json_or_none(report.dbt_vars),
        "success": report.success,
        "expectations": len(report.findings),
        "expectations_met": sum(f.success for f in report.findings),
        "critical_failures": [f.describe() for f in report.failures],
        # the tables read on part of their rows: a random sample (dbt's tests read
        # every row), or an incremental build's load (the loads before validated theirs)
        "sampled": {
            t: {"rows_validated": n, "rows": total} for t, (n, total) in report.sampled.items()
        },
        # rows_in_load: the load's rows of the table (of which `sampled` says how
        # many were read when they were more than the sample)
        "scoped_to_load": {
            t: {"rows_in_load": n, "rows": total} for t, (n, total) in report.scoped.items()
        },
        "warnings": [f.describe() for f in report.warnings],
        "bi_snapshot": str(bi_path) if bi_path else None,
    }


def _json_or_none(text: str | None) -> Any:
    """The command line's dbt vars as recorded by dbt's on-run-start hook (JSON text)."""
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError:
        return text


def read_validation_record(db_path: str | Path) -> dict[str, Any] | None:
    """The stored record, or None when the warehouse was never validated."""
    return _read_json(validation_path(db_path))


SNAPSHOT_VALIDATION = "snapshot_validation"


def read_snapshot_validation(
    db_path: str | Path, con: duckdb.DuckDBPyConnection
) -> dict[str, Any] | None:
    """The validation a BI snapshot was published after: the record the snapshot
    carries (table snapshot_validation, one row: the validation record as JSON), else,
    for a snapshot published before it carried one, the record beside a warehouse in
    the same folder that names this file as its snapshot. None: not a snapshot."""
    try:
        row = con.execute(f"select record from main.{SNAPSHOT_VALIDATION}").fetchone()
    except duckdb.CatalogException:
        row = None
    if row is not None:
        return dict(json.loads(row[0]))
    me = Path(db_path).resolve()
    for path in sorted(me.parent.glob("*.validation.json")):
        rec = _read_json(path)
        if rec and rec.get("bi_snapshot") and Path(rec["bi_snapshot"]).resolve() == me:
            return rec
    return None


def read_build_record(db_path: str | Path) -> dict[str, Any] | None:
    """The last judge-bias build's record, or None."""
    return _read_json(build_record_path(db_path))


def read_last_run(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The dbt invocation that last rebuilt the tables (None: no such table)."""
    try:
        cur = con.execute("select * from main.dbt_last_run")
    except duckdb.CatalogException:
        return None
    row = cur.fetchone()
    if row is None:
        return None
    return {d[0]: v for d, v in zip(cur.description, row, strict=True)}


def _process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def pid_alive(pid: int, started: int | None = None) -> bool:
    """Whether process ``pid`` runs (and, given its start time, is still that process)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    if started is not None and (now := _process_start(pid)) is not None:
        return now == started
    return True


@dataclass
class BuildRecord:
    """The record of one judge-bias build, rewritten at each stage."""

    db_path: Path
    data_dir: Path | None  # None on the relation route
    bi_path: Path | None = None
    build_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started_at: str = field(default_factory=_now)
    state: str = RUNNING
    stage: str = STAGES[0]
    message: str | None = None
    warnings: list[str] = field(default_factory=list)
    # (stage, Unix time it began), in order: `judge-bias bench --scale-build` times
    # each stage from them (judge_bias.bench.profile)
    stage_times: list[tuple[str, float]] = field(default_factory=lambda: [(STAGES[0], time.time())])

    def write(self, finished: bool = False) -> Path:
        pid = os.getpid()
        return _write_json(
            build_record_path(self.db_path),
            {
                "build_id": self.build_id,
                "state": self.state,
                "stage": self.stage,
                "started_at": self.started_at,
                "finished_at": _now() if finished else None,
                "pid": pid,
                "pid_started": _process_start(pid),
                "data_dir": str(self.data_dir) if self.data_dir else None,
                "database": str(self.db_path),
                "bi_snapshot": str(self.bi_path) if self.bi_path else None,
                "message": self.message,
                "warnings": self.warnings,
                "stage_times": [[s, t] for s, t in self.stage_times],
            },
        )

    def reach(self, stage: str) -> None:
        self.stage = stage
        self.stage_times.append((stage, time.time()))
        self.write()

    def finish(self, state: str, message: str | None = None) -> None:
        self.state, self.message = state, message
        if state == OK:
            self.stage = STAGES[-1]
        self.stage_times.append((STAGES[-1], time.time()))
        self.write(finished=True)


def running_build(db_path: str | Path) -> dict[str, Any] | None:
    """The record of a build that is running now on this warehouse (another process)."""
    rec = read_build_record(db_path)
    pid = int(rec.get("pid") or 0) if rec else 0
    if not rec or rec.get("state") != RUNNING or pid <= 0 or pid == os.getpid():
        return None
    return rec if pid_alive(pid, rec.get("pid_started")) else None


@dataclass
class WarehouseStatus:
    """What to tell a reader before any table: problems (red) and whether the
    validation record describes the tables as they are."""

    problems: list[str]
    validation: dict[str, Any] | None
    validation_current: bool


def _build_problem(rec: dict[str, Any]) -> str | None:
    state, stage = rec.get("state"), rec.get("stage")
    where = f"data folder {rec['data_dir']}" if rec.get("data_dir") else "input relations"
    when = f"started {rec.get('started_at')} on {where}"
    if state == RUNNING:
        pid = int(rec.get("pid") or 0)
        if pid > 0 and pid_alive(pid, rec.get("pid_started")):
            return (
                f"A build is running on this warehouse now (PID {rec.get('pid')}, {when}, "
                f"stage: {stage}): its tables may be half-built; the BI snapshot is not."
            )
        return (
            f"The last build ({when}) did not finish: it was killed during the stage "
            f"'{stage}'. Tables may mix that build and an earlier one; build again."
        )
    if state == FAILED:
        return (
            f"The last build ({when}) failed during the stage '{stage}': {rec.get('message')}. "
            "Tables may mix that build and an earlier one; the BI snapshot was not updated."
        )
    if state == VALIDATION_FAILED:
        return (
            f"The last build ({when}) failed validation: {rec.get('message')}. "
            "The BI snapshot was not updated."
        )
    return None


def warehouse_status(db_path: str | Path, con: duckdb.DuckDBPyConnection) -> WarehouseStatus:
    """Compare the build record, the validation record and the tables' last dbt run."""
    problems: list[str] = []
    rec = read_build_record(db_path)
    if rec and (problem := _build_problem(rec)):
        problems.append(problem)
    validation = read_validation_record(db_path)
    if validation is None:  # a BI snapshot: a copy of the tables it was validated with
        validation = read_snapshot_validation(db_path, con)
    last_run = read_last_run(con)
    current = validation is not None and (
        last_run is None or validation.get("dbt_invocation_id") == last_run.get("invocation_id")
    )
    if validation is None:
        problems.append(
            "Not validated: no validation record beside this warehouse (built by a plain "
            "dbt command?); run judge-bias validate, or judge-bias build."
        )
    elif not current:
        assert last_run is not None  # not current: a later dbt run than the validation
        rebuilt = f"dbt {last_run.get('command')} at {last_run.get('started_at')}"
        problems.append(
            f"Not validated: the tables were rebuilt ({rebuilt}, data folder "
            f"{last_run.get('data_dir')}) after the last validation "
            f"({validation.get('validated_at')}, data folder {validation.get('data_dir')}); "
            "run judge-bias validate, or judge-bias build."
        )
    elif not validation.get("success") and not (rec and rec.get("state") == VALIDATION_FAILED):
        problems.append(
            f"Validation failed ({validation.get('validated_at')}): "
            f"{len(validation.get('critical_failures', []))} critical failures (see Provenance)."
        )
    return WarehouseStatus(problems, validation, current)
