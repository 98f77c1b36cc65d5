"""Run the warehouse: dbt build on a data directory, then the validation suites."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from judge_bias.validation import ValidationReport, validate

PROJECT_DIR = Path(os.environ.get("JUDGE_BIAS_PROJECT_DIR", Path(__file__).resolve().parents[2]))
DEFAULT_DB = Path("warehouse") / "judge_bias.duckdb"
DEFAULT_DATA = Path("data") / "demo"


class BuildError(RuntimeError):
    """dbt build or the validation failed."""


@dataclass
class BuildResult:
    db_path: Path
    validation: ValidationReport


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
    args: list[str], db_path: Path, data_dir: Path | None = None, quiet: bool = False
) -> None:
    """Run one dbt command in the project; raise BuildError when it fails."""
    cmd = [str(Path(sys.executable).with_name("dbt")), *(["--quiet"] if quiet else []), *args]
    if data_dir is not None:
        cmd += ["--vars", json.dumps({"data_dir": str(data_dir)})]
    if db_path.resolve() != (PROJECT_DIR / DEFAULT_DB).resolve():
        # Keep a side warehouse's dbt artefacts beside it, not in the project's target/.
        side = db_path.parent / f"{db_path.stem}.dbt"
        cmd += ["--target-path", str(side / "target"), "--log-path", str(side / "logs")]
    proc = subprocess.run(cmd, cwd=PROJECT_DIR, env=dbt_env(db_path), check=False)
    if proc.returncode != 0:
        raise BuildError(f"dbt {' '.join(args)} failed with exit code {proc.returncode}")


def build(
    data_dir: str | Path, db_path: str | Path | None = None, quiet: bool = False
) -> BuildResult:
    """dbt build on ``data_dir`` into ``db_path``, then the validation suites."""
    data = Path(data_dir).resolve()
    if not data.is_dir():
        raise BuildError(f"--data {data_dir}: not a directory")
    db = Path(db_path).resolve() if db_path else (PROJECT_DIR / DEFAULT_DB)
    db.parent.mkdir(parents=True, exist_ok=True)
    run_dbt(["build"], db, data, quiet=quiet)
    report = validate(db)
    return BuildResult(db, report)
