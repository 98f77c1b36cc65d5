"""The GLM fits that failed or warn (glm_fits), named for the build's summary and the report.

glm/runner.py records a fit that raised as status ``error`` and one whose diagnostics
fail (divergences, R-hat, ESS, BFMI, a non-finite elpd_loo) as ``warning``, with the
reason in notes; this module reads those rows back from the glm_fits mart so that
neither outcome stays invisible (issue 29). ``skipped`` and ``not requested`` are
choices or limits the report's "not supported" line already explains.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

PROBLEM_STATUSES = ("error", "warning")
# a longer note (a traceback's message) is cut, at a word: a warning's notes hold the
# fit's notes, then its diagnostics (an R-hat sentence alone is ~130 characters)
NOTE_WIDTH = 240


@dataclass(frozen=True)
class FitProblem:
    """One glm_fits row with status error or warning."""

    model: str
    dimension: str
    status: str
    notes: str

    @property
    def note(self) -> str:
        """The notes on one line, cut to NOTE_WIDTH at the last space before it."""
        note = " ".join(self.notes.split())
        if len(note) <= NOTE_WIDTH:
            return note
        head = note[: NOTE_WIDTH - 3]
        return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip(",;:") + "..."

    def describe(self) -> str:
        """``model on dimension: failed (note)`` or ``...: warning (note)``."""
        what = "failed" if self.status == "error" else "warning"
        tail = f" ({self.note})" if self.note else ""
        return f"{self.model} on {self.dimension}: {what}{tail}"


def glm_fit_problems(con: duckdb.DuckDBPyConnection) -> list[FitProblem]:
    """The error and warning fits of glm_fits, errors first; empty when the
    warehouse has no glm_fits table."""
    has = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'main' and table_name = 'glm_fits'"
    ).fetchone()
    if not has or not has[0]:
        return []
    rows = con.execute(
        "select model, dimension, status, coalesce(notes, '') from glm_fits "
        "where status in (?, ?) order by status = 'warning', model, dimension",
        list(PROBLEM_STATUSES),
    ).fetchall()
    return [FitProblem(*map(str, r)) for r in rows]


def glm_fit_summary(con: duckdb.DuckDBPyConnection) -> list[str]:
    """One line per failed or warning fit, for the build's closing summary:
    ``GLM fit failed: ordinal on quality (ValueError: ...)``."""
    return [f"GLM fit {p.describe()}" for p in glm_fit_problems(con)]


def glm_fit_summary_of(db_path: Path) -> list[str]:
    """glm_fit_summary of the warehouse at ``db_path`` (opened read-only)."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return glm_fit_summary(con)
    finally:
        con.close()
