"""Time compiled dbt SQL models on a built warehouse, old against new.

python -m judge_bias.bench.sql_timing W.duckdb OLD.sql NEW.sql [...] [--runs 3]
[--compare]

Each file (a model's compiled SQL, from ``<warehouse>.dbt/target/compiled/``) runs as
``create temp table ... as`` in one DuckDB process with the build's settings
(memory_limit as a build's: limits.DEFAULT_DUCKDB_MEMORY; 2 threads), under DuckDB's
profiler: its time and peak buffer memory, the lowest of ``--runs`` runs (the machine is
shared). The profiler's time sums its operators' time over threads: not the process's
CPU seconds (measured 2-5x them, e.g. 4.1 s for int_ppi_units at 1M against 0.8 s of
process CPU); compare files with each other, and whole builds with `judge-bias bench
--scale-build`. ``--compare`` then counts each file's rows ``except all`` the first
file's, both ways, and checks that the column names and types are the same: 0 and 0
means the same multiset of rows.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import duckdb

from judge_bias.limits import DEFAULT_DUCKDB_MEMORY


def profile_query(db: duckdb.DuckDBPyConnection, sql: str, out: Path) -> tuple[float, int, int]:
    """(DuckDB profiler s, peak buffer bytes, rows) of one ``create temp table`` of sql."""
    db.execute(f"pragma enable_profiling='json'; pragma profiling_output='{out}'")
    db.execute(f"create or replace temp table _timed as {sql}")
    db.execute("pragma disable_profiling")
    report = json.loads(out.read_text())
    rows = db.execute("select count(*) from _timed").fetchone()
    db.execute("drop table _timed")  # else its buffer counts in the next query's peak
    return (
        report["query"]["cpu_time"],
        report["system"]["peak_buffer_memory"],
        rows[0] if rows else 0,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse")
    parser.add_argument("sql", nargs="+", help="compiled SQL files")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args(argv)
    db = duckdb.connect(args.warehouse, read_only=True)
    db.execute(
        f"set memory_limit='{DEFAULT_DUCKDB_MEMORY}'; set threads=2; set enable_progress_bar=false"
    )
    queries = [Path(f).read_text().strip().rstrip(";") for f in args.sql]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "profile.json"
        for name, sql in zip(args.sql, queries, strict=True):
            runs = [profile_query(db, sql, out) for _ in range(args.runs)]
            cpu = min(r[0] for r in runs)
            peak = min(r[1] for r in runs)
            print(
                f"{name}: {runs[0][2]:,} rows, profiler time {cpu:.2f} s, "
                f"peak buffer {peak / 2**20:,.0f} MB "
                f"(runs: {', '.join(f'{r[0]:.2f}' for r in runs)})",
                flush=True,
            )
    if args.compare:
        first = queries[0]
        for name, sql in zip(args.sql[1:], queries[1:], strict=True):
            types = [db.execute(f"describe ({q})").fetchall() for q in (first, sql)]
            same_types = [t[:2] for t in types[0]] == [t[:2] for t in types[1]]
            gone = db.execute(f"select count(*) from (({first}) except all ({sql}))").fetchone()
            new = db.execute(f"select count(*) from (({sql}) except all ({first}))").fetchone()
            print(
                f"{name}: columns and types {'same' if same_types else 'DIFFER'}; rows only in "
                f"{args.sql[0]}: {gone[0] if gone else '?'}, only here: {new[0] if new else '?'}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
