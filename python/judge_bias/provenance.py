"""The validation record: each build writes its validation result beside the
warehouse (<db stem>.validation.json); the report shows it.

Kept apart from validation.py so that reading it does not import Great
Expectations.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge_bias.validation import ValidationReport


def validation_path(db_path: str | Path) -> Path:
    """The validation record written beside the warehouse by each build."""
    db = Path(db_path)
    return db.with_name(f"{db.stem}.validation.json")


def write_validation_record(
    db_path: Path, data_dir: Path, report: ValidationReport, bi_path: Path | None
) -> Path:
    """Store the validation result beside the warehouse."""
    record = {
        "validated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": str(db_path),
        "data_dir": str(data_dir),
        "success": report.success,
        "expectations": len(report.findings),
        "expectations_met": sum(f.success for f in report.findings),
        "critical_failures": [f.describe() for f in report.failures],
        "warnings": [f.describe() for f in report.warnings],
        "bi_snapshot": str(bi_path) if bi_path else None,
    }
    path = validation_path(db_path)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def read_validation_record(db_path: str | Path) -> dict[str, Any] | None:
    """The stored record, or None when the database was not built by judge-bias build."""
    path = validation_path(db_path)
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))
