"""Run the warehouse: dbt build on a data directory, then the validation suites."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judge_bias.provenance import validation_path, write_validation_record
from judge_bias.snapshot import mart_tables, publish_snapshot

if TYPE_CHECKING:
    from judge_bias.validation import ValidationReport

PROJECT_DIR = Path(os.environ.get("JUDGE_BIAS_PROJECT_DIR", Path(__file__).resolve().parents[2]))
DEFAULT_DB = Path("warehouse") / "judge_bias.duckdb"
DEFAULT_DATA = Path("data") / "demo"


class BuildError(RuntimeError):
    """dbt build or the validation failed."""


@dataclass
class BuildResult:
    db_path: Path
    validation: ValidationReport
    bi_path: Path | None = None  # the published snapshot; None when validation failed


def target_dir(db_path: Path) -> Path:
    """Where dbt writes its artefacts for this warehouse."""
    if db_path.resolve() == (PROJECT_DIR / DEFAULT_DB).resolve():
        return PROJECT_DIR / "target"
    return db_path.parent / f"{db_path.stem}.dbt" / "target"


def default_bi_path(db_path: Path) -> Path:
    """warehouse/bi.duckdb beside the default warehouse; <stem>.bi.duckdb otherwise."""
    if db_path.resolve() == (PROJECT_DIR / DEFAULT_DB).resolve():
        return db_path.with_name("bi.duckdb")
    return db_path.with_name(f"{db_path.stem}.bi.duckdb")


def validate(db_path: Path) -> ValidationReport:
    """The validation suites (Great Expectations is imported only when they run)."""
    from judge_bias.validation import validate as run_suites

    return run_suites(db_path)


def dbt_env(db_path: Path) -> dict[str, str]:
    """The environment dbt runs in: no telemetry, the warehouse file chosen."""
    env = dict(os.environ)
    env.update(
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        DO_NOT_TRACK="1",
        GX_ANALYTICS_ENABLED="False",
        JUDGE_BIAS_DB=str(db_path),
        DBT_PROFILES_DIR=str(PROJECT_DIR),
    )
    return env


def run_dbt(
    args: list[str],
    db_path: Path,
    data_dir: Path | None = None,
    quiet: bool = False,
    capture: bool = False,
) -> None:
    """Run one dbt command in the project; raise BuildError when it fails
    (``capture``: keep dbt's output off the terminal)."""
    cmd = [str(Path(sys.executable).with_name("dbt")), *(["--quiet"] if quiet else []), *args]
    if data_dir is not None:
        cmd += ["--vars", json.dumps({"data_dir": str(data_dir)})]
    if db_path.resolve() != (PROJECT_DIR / DEFAULT_DB).resolve():
        # Keep a side warehouse's dbt artefacts beside it, not in the project's target/.
        target = target_dir(db_path)
        cmd += ["--target-path", str(target), "--log-path", str(target.parent / "logs")]
    proc = subprocess.run(
        cmd, cwd=PROJECT_DIR, env=dbt_env(db_path), check=False, capture_output=capture
    )
    if proc.returncode != 0:
        raise BuildError(f"dbt {' '.join(args)} failed with exit code {proc.returncode}")


def build(
    data_dir: str | Path,
    db_path: str | Path | None = None,
    quiet: bool = False,
    bi_path: str | Path | None = None,
) -> BuildResult:
    """dbt build on ``data_dir`` into ``db_path``, then the validation suites, then,
    only when they pass, the BI snapshot."""
    data = Path(data_dir).resolve()
    if not data.is_dir():
        raise BuildError(f"--data {data_dir}: not a directory")
    db = Path(db_path).resolve() if db_path else (PROJECT_DIR / DEFAULT_DB)
    db.parent.mkdir(parents=True, exist_ok=True)
    validation_path(db).unlink(missing_ok=True)  # never leave a stale record behind
    run_dbt(["build"], db, data, quiet=quiet)
    report = validate(db)
    if not report.success:
        write_validation_record(db, data, report, None)
        return BuildResult(db, report)
    bi = Path(bi_path).resolve() if bi_path else default_bi_path(db)
    tables = mart_tables(target_dir(db) / "manifest.json")
    published = publish_snapshot(db, bi, tables)
    write_validation_record(db, data, report, published)
    return BuildResult(db, report, published)
