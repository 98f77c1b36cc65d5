"""Two warehouses compared table by table: the check that a change left results alone.

``python -m judge_bias.bench.compare_builds A.duckdb B.duckdb`` prints one line per
difference and exits 1 when there is any. Every table of schema ``main`` in either
file is compared: the same tables, the same columns with the same types, the same
number of rows, and the same rows as multisets: rows are put in one order by their
non-float columns and then by their floats rounded to the tolerance's digits, and
floats are equal when ``|a - b| <= abs_tol + rel_tol * max(|a|, |b|)`` (NaN equals
NaN, null equals null). Columns that say when or where a build ran (build times,
durations, paths, the pre-flight's clock) differ between any two builds and are left
out by name (``VOLATILE``); ``--ignore-table`` and ``--ignore-column`` add more. A
table or view that cannot be read in a file (a view over a database attached only
during the build) is one difference line naming it, not an error.

A table whose rows are the same exactly in both files (the same count and the same
order-free fingerprints: two sums of 64-bit row hashes, computed in DuckDB) is equal
without fetching its rows; only a table whose fingerprints differ (float noise, or a
real difference) is fetched and compared row by row as above, so large warehouses
that are equal compare at DuckDB's scan speed.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

REL_TOL = 1e-9
ABS_TOL = 1e-12
# column names that record when, where, how or how long a build ran (data_dir: the input
# folder's path, dbt_last_run's: two builds of copies of one folder differ there)
VOLATILE = re.compile(
    r"(^|_)(built_at|started_at|finished_at|loaded_at|created_at|run_at|generated_at|"
    r"timestamp|seconds|elapsed|duration|wall|path|db_path|data_dir|source_file|invocation_id|"
    r"hostname|threads)($|_)"
)
FLOAT_TYPES = ("DOUBLE", "FLOAT", "REAL", "DECIMAL")


@dataclass
class Comparison:
    """What differs between two warehouses; empty ``differences`` means equal."""

    tables: int = 0
    rows: int = 0
    differences: list[str] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.differences


def _tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    rows = con.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'main' order by table_name, ordinal_position"
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, dtype in rows:
        out.setdefault(str(table), []).append((str(column), str(dtype)))
    return out


def _unreadable(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> str:
    """'' when ``table`` can be read in ``con``, else one difference line: a view over
    a database attached only during the build (the relation route's
    stg_inputs__relation_counts was one until session 24, a table since) cannot be read
    in the file alone."""
    try:
        con.execute(f'select * from main."{table}" limit 0').fetchall()
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"{table}: cannot be read in {path} ({first}); --ignore-table {table} leaves it out"
    return ""


def _is_float(dtype: str) -> bool:
    return dtype.upper().startswith(FLOAT_TYPES)


def floats_equal(a: object, b: object, rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL) -> bool:
    """Null equals null, NaN equals NaN, +-inf equal themselves, else the tolerance."""
    if a is None or b is None:
        return a is None and b is None
    x, y = float(a), float(b)  # type: ignore[arg-type]
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= abs_tol + rel_tol * max(abs(x), abs(y))


def _sort_key(
    row: Sequence[object], float_cols: set[int], digits: int | None
) -> tuple[object, ...]:
    exact = [(v is None, str(v)) for i, v in enumerate(row) if i not in float_cols]
    rounded = []
    for i in sorted(float_cols):
        v = row[i]
        if v is None or (isinstance(v, float) and math.isnan(v)):
            rounded.append((1, 0.0))
        else:
            x = float(v)  # type: ignore[arg-type]
            rounded.append((0, x if digits is None else round(x, digits)))
    return (*exact, *rounded)


def _tolerance(text: str) -> float:
    """A tolerance argument: a finite number, 0 or more."""
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"a tolerance is a number >= 0, not {text}")
    return value


def _rows(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[str]
) -> list[tuple[object, ...]]:
    # a table of volatile columns only: its rows, as empty tuples (their number counts)
    cols = ", ".join(f'"{c}"' for c in columns) or "1"
    rows = con.execute(f'select {cols} from main."{table}"').fetchall()
    return rows if columns else [() for _ in rows]


def _fingerprint(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[str]
) -> tuple[object, ...]:
    """(rows, two sums of row hashes): equal for two multisets of equal rows, in any
    order; unequal for different ones except with probability about 2**-64."""
    cols = ", ".join(f'"{c}"' for c in columns)
    row = con.execute(
        f"select count(*), sum(hash({cols})::hugeint), sum(hash({cols}, 'salt')::hugeint) "
        f'from main."{table}"'
    ).fetchone()
    return tuple(row) if row else ()


def _compare_table(
    a: duckdb.DuckDBPyConnection,
    b: duckdb.DuckDBPyConnection,
    table: str,
    columns: list[tuple[str, str]],
    rel_tol: float,
    abs_tol: float,
) -> list[str]:
    names = [c for c, _ in columns]
    if names and _fingerprint(a, table, names) == _fingerprint(b, table, names):
        return []
    float_cols = {i for i, (_, t) in enumerate(columns) if _is_float(t)}
    rows_a, rows_b = _rows(a, table, names), _rows(b, table, names)
    if len(rows_a) != len(rows_b):
        return [f"{table}: {len(rows_a)} rows against {len(rows_b)}"]
    # rows sorted with floats rounded to 3 digits fewer than the tolerance (12 at most);
    # --rel-tol 0 (exact equality) sorts on the exact floats (log10(0) raised)
    digits = None if rel_tol == 0 else max(0, min(12, int(-math.log10(rel_tol)) - 3))
    rows_a.sort(key=lambda r: _sort_key(r, float_cols, digits))
    rows_b.sort(key=lambda r: _sort_key(r, float_cols, digits))
    out: list[str] = []
    for n, (ra, rb) in enumerate(zip(rows_a, rows_b, strict=True)):
        for i, name in enumerate(names):
            va, vb = ra[i], rb[i]
            same = floats_equal(va, vb, rel_tol, abs_tol) if i in float_cols else va == vb
            if not same:
                out.append(f"{table}.{name} (sorted row {n}): {va!r} against {vb!r}")
                if len(out) >= 5:
                    return [*out, f"{table}: more differences not listed"]
    return out


def compare_warehouses(
    path_a: Path,
    path_b: Path,
    *,
    rel_tol: float = REL_TOL,
    abs_tol: float = ABS_TOL,
    ignore_tables: Iterable[str] = (),
    ignore_columns: Iterable[str] = (),
) -> Comparison:
    """Compare every table of schema main in two DuckDB files (opened read-only)."""
    if not (rel_tol >= 0 and abs_tol >= 0):
        raise ValueError(f"tolerances are numbers >= 0, not rel_tol {rel_tol}, abs_tol {abs_tol}")
    skip_tables, skip_cols = set(ignore_tables), set(ignore_columns)
    result = Comparison()
    a = duckdb.connect(str(path_a), read_only=True)
    b = duckdb.connect(str(path_b), read_only=True)
    try:
        ta, tb = _tables(a), _tables(b)
        for table in sorted(set(ta) ^ set(tb)):
            if table not in skip_tables:
                where = path_a if table in ta else path_b
                result.differences.append(f"{table}: only in {where}")
        for table in sorted(set(ta) & set(tb)):
            if table in skip_tables:
                continue
            cols_a = [(c, t) for c, t in ta[table] if c not in skip_cols and not VOLATILE.search(c)]
            cols_b = [(c, t) for c, t in tb[table] if c not in skip_cols and not VOLATILE.search(c)]
            result.ignored_columns += [f"{table}.{c}" for c, t in ta[table] if (c, t) not in cols_a]
            if cols_a != cols_b:
                result.differences.append(f"{table}: columns {cols_a} against {cols_b}")
                continue
            unreadable = [_unreadable(con, table, path) for con, path in ((a, path_a), (b, path_b))]
            if any(unreadable):
                result.differences += [line for line in unreadable if line]
                continue
            result.tables += 1
            diffs = _compare_table(a, b, table, cols_a, rel_tol, abs_tol)
            result.differences += diffs
            if not diffs:
                count = a.execute(f'select count(*) from main."{table}"').fetchone()
                result.rows += int(count[0]) if count else 0
    finally:
        a.close()
        b.close()
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--rel-tol", type=_tolerance, default=REL_TOL)
    p.add_argument("--abs-tol", type=_tolerance, default=ABS_TOL)
    p.add_argument("--ignore-table", action="append", default=[])
    p.add_argument("--ignore-column", action="append", default=[])
    args = p.parse_args(argv)
    for path in (args.a, args.b):
        if not path.is_file():
            print(f"compare_builds: {path} is not a file", file=sys.stderr)
            return 2
    res = compare_warehouses(
        args.a,
        args.b,
        rel_tol=args.rel_tol,
        abs_tol=args.abs_tol,
        ignore_tables=args.ignore_table,
        ignore_columns=args.ignore_column,
    )
    for line in res.differences:
        print(line)
    verdict = "equal" if res.equal else f"{len(res.differences)} differences"
    print(
        f"{verdict}: {res.tables} tables, {res.rows:,} rows compared "
        f"(rel_tol {args.rel_tol:g}, abs_tol {args.abs_tol:g}); "
        f"{len(res.ignored_columns)} volatile columns left out"
    )
    return 0 if res.equal else 1


if __name__ == "__main__":
    sys.exit(main())
