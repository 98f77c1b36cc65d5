"""Compare two built warehouses table by table: the same columns in the same order,
the same rows (text and integers exact, floating-point numbers to 1e-9, nulls and
NaN where the other has them). Rows are compared as sorted sets: a table's order is
not part of its result. Wall-clock columns (``*seconds``) are left out."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

TOLERANCE = 1e-9


def table_names(con: duckdb.DuckDBPyConnection, schema: str = "main") -> set[str]:
    """The tables and views of ``schema``."""
    rows = con.execute(
        "select table_name from information_schema.tables "
        "where table_schema = ? and table_catalog = current_database()",
        [schema],
    ).fetchall()
    return {name for (name,) in rows}


def read_table(db: Path, table: str, drop_columns: Iterable[str] = ()) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        frame = con.execute(f'select * from main."{table}"').df()
    drop = [c for c in frame.columns if c in set(drop_columns) or c.endswith("seconds")]
    return frame.drop(columns=drop)


def _canonical(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    frame = frame.copy()
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    for col in frame.columns:
        if col not in floats:
            frame[col] = [None if _missing(v) else str(v) for v in frame[col]]
    keys = [c for c in frame.columns if c not in floats] + floats
    frame = frame.sort_values(keys, na_position="last", kind="mergesort") if keys else frame
    return frame.reset_index(drop=True), floats


def _missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or an array is a value
        return False


def assert_same_table(want: pd.DataFrame, got: pd.DataFrame, table: str) -> None:
    assert list(got.columns) == list(want.columns), f"{table}: columns differ"
    assert len(got) == len(want), f"{table}: {len(got)} rows, expected {len(want)}"
    w, floats = _canonical(want)
    g, floats_got = _canonical(got)
    assert floats == floats_got, f"{table}: float columns differ ({floats_got} vs {floats})"
    for col in w.columns:
        if col in floats:
            np.testing.assert_allclose(
                g[col].to_numpy(float), w[col].to_numpy(float), rtol=0, atol=TOLERANCE,
                err_msg=f"{table}.{col}",
            )  # fmt: skip
        else:
            assert list(g[col]) == list(w[col]), f"{table}.{col}: values differ"


def assert_same_warehouse(
    want_db: Path, got_db: Path, tables: Iterable[str], drop_columns: Iterable[str] = ()
) -> None:
    """Every table of ``tables`` equal in both warehouses; the message names each
    table that differs and how."""
    differ = []
    for table in tables:
        try:
            assert_same_table(
                read_table(want_db, table, drop_columns),
                read_table(got_db, table, drop_columns),
                table,
            )
        except AssertionError as exc:
            differ.append(f"{table}: {str(exc).splitlines()[0][:300]}")
    assert not differ, "\n".join(differ)
