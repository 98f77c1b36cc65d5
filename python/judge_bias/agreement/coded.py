"""A relation's rows as pandas with its key columns as categoricals: DuckDB numbers
the distinct values and sends integer codes, never a Python string per row (at
10M ratings, 1.7M rows of three string columns were most of a mart's memory and
a third of its time).

The categories are the distinct values in pandas' sort order (DuckDB's collation
may differ: its numbering is mapped to pandas' order), so sorting, grouping and
``pd.factorize(..., sort=True)`` give what they gave on the string columns.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from judge_bias.stats.binary_cells import query
from judge_bias.warehouse.frames import sql_literal, to_pandas


def text_columns(relation: Any) -> frozenset[str]:
    """The columns of a DuckDB relation that are text (VARCHAR): ``binary``'s
    question, asked of the relation once per query built, not once per column."""
    return frozenset(
        c for c, t in zip(relation.columns, relation.types, strict=True) if str(t) == "VARCHAR"
    )


def binary(text: Set[str], column: str, prefix: str = "") -> str:
    """``column`` compared under the binary collation when it is text (one of
    ``text``: ``text_columns`` of its relation; collate c: a nocase default would
    merge 'a' and 'A' in a distinct, a join or a filter); another type as it is (a
    collation on a non-text column is a DuckDB binder error: review20d)."""
    name = f"{prefix}{column}"
    return f"({name} collate c)" if column in text else name


def _numbered(column: str, expr: str) -> str:
    # ``expr``: binary(text_columns(relation), column); the hash breaks any tie left in the order
    return (
        f"k_{column} as (select v, row_number() over (order by v, hash(v)) - 1 as code "
        f"from (select distinct {expr} as v from r))"
    )


def _with_nulls(values: np.ndarray) -> Any:
    """A fetched column as numpy, or with its nulls: NaN (floats), NA (integers)."""
    if not isinstance(values, np.ma.MaskedArray) or not values.mask.any():
        return np.asarray(values)
    if values.dtype.kind in "iu":
        return pd.arrays.IntegerArray(values.data.astype(np.int64), values.mask.copy())
    if values.dtype.kind == "b":
        return pd.arrays.BooleanArray(values.data, values.mask.copy())
    return np.ma.filled(values.astype(float), np.nan)


def _sort_rows(data: dict[str, Any], names: Sequence[str]) -> None:
    """Sorts the fetched columns (numbers, booleans, codes: pandas' order of the
    values, null -1) in place by ``names`` in turn, a null (masked) before any value
    of its column (pandas' ``na_position="first"``): the rows' order is then
    fixed by their values (numpy's lexsort: an index a row, a key at a time), not
    by the join's threads (DuckDB's own sort of the rows peaked ~120 bytes a row
    higher)."""
    keys = []
    for c in reversed(names):  # lexsort: the last key is the primary one
        values = data[c]
        if isinstance(values, np.ma.MaskedArray):  # the data under a mask is any value
            keys += [np.ma.filled(values, 0), ~np.ma.getmaskarray(values)]
        else:
            keys.append(np.asarray(values))
    order = np.lexsort(keys)
    del keys
    for c in names:
        data[c] = data[c][order]


def coded_rows(
    relation: Any, coded: Sequence[str], columns: Sequence[str], ordered: bool = False
) -> pd.DataFrame:
    """The rows of ``relation`` with ``coded`` (categoricals, categories sorted) then
    ``columns`` (as they are). A pandas or Spark frame: its rows as they are.
    ``ordered``: the rows sorted by every column in turn (_sort_rows; the join's
    order varies run to run with DuckDB's threads, and a mart that numbers items by
    appearance needs a fixed one: bit-reproducible when the rows are distinct)."""
    if not isinstance(relation, duckdb.DuckDBPyRelation):
        return to_pandas(relation)[[*coded, *columns]]
    text = text_columns(relation)
    expr = {c: binary(text, c) for c in coded}
    ctes = ", ".join(_numbered(c, expr[c]) for c in coded)
    select = ", ".join([*(f"k_{c}.code as {c}" for c in coded), *(f"r.{c}" for c in columns)])
    joins = " ".join(
        f"inner join k_{c} on {binary(text, c, 'r.')} is not distinct from k_{c}.v" for c in coded
    )
    data = query(relation, f"with {ctes} select {select} from r {joins}").fetchnumpy()
    categories = {}
    for c in coded:
        values = query(relation, f"with {_numbered(c, expr[c])} select v from k_{c} order by code")
        names = pd.Index(values.fetchnumpy()["v"].tolist())
        missing = names.isna()
        categories[c] = names[~missing].sort_values()
        # DuckDB's code -> the position in pandas' order (null: -1, as pandas codes it)
        to_rank = np.full(len(names), -1, dtype=np.int64)
        to_rank[~missing] = categories[c].get_indexer(names[~missing])
        data[c] = to_rank[np.asarray(data[c], dtype=np.int64)]
    if ordered:
        _sort_rows(data, [*coded, *columns])
    out = {c: pd.Categorical.from_codes(data[c], categories=categories[c]) for c in coded}
    for c in columns:  # DuckDB sends a column with nulls as a masked array
        out[c] = _with_nulls(data[c])
    return pd.DataFrame(out)


def group_parts(relation: Any, by: str, max_rows: int, size: str = "count(*)") -> list[list[Any]]:
    """The values of ``by`` (a text column) of a DuckDB relation packed, in pandas'
    order of the values (nulls last), into consecutive parts of at most ``max_rows``
    rows each (a value with more rows is a part alone): a mart that needs one
    value's rows at once reads one part at a time, in the order it would have gone
    through them. ``size``: an aggregate over one value's rows giving the rows the
    mart holds for it (default: the value's rows themselves)."""
    key = binary(text_columns(relation), by)
    data = query(relation, f"select {key} as v, {size} as n from r group by all").fetchnumpy()
    values = pd.Series(np.asarray(data["v"], dtype=object).tolist(), dtype=object)
    parts: list[list[Any]] = []
    rows = max_rows  # the first value starts a part
    for i in values.sort_values(na_position="last", kind="stable").index:
        n = int(data["n"][i])
        if rows + n > max_rows:
            parts.append([])
            rows = 0
        parts[-1].append(values[i])
        rows += n
    return parts


def part_of(relation: Any, by: str, values: list[Any], text: Set[str] | None = None) -> Any:
    """The rows of ``relation`` whose ``by`` is one of ``values`` (None: null), a
    filter DuckDB pushes into its scan. ``text``: the relation's ``text_columns``,
    when the caller has them (parts_of, once for all its parts)."""
    listed = [v for v in values if not pd.isna(v)]
    text = text_columns(relation) if text is None else text
    key = binary(text, by)  # 'A' alone in a part under a nocase default (review20d)
    terms = [f"{key} in ({', '.join(sql_literal(v) for v in listed)})"] if listed else []
    if len(listed) < len(values):
        terms.append(f"{by} is null")
    return relation.filter(" or ".join(terms))


def parts_of(relation: Any, by: str, max_rows: int, size: str | None = None) -> list[Any]:
    """``relation`` itself when its rows fit ``max_rows``, else its parts of whole
    ``by`` values (group_parts, in pandas' order of the values) as relations.
    ``size``: group_parts' aggregate, when what the mart holds per value is not its
    rows (then the relation is whole when the sizes' total fits)."""
    if size is None:
        n_rows = int(query(relation, "select count(*) from r").fetchall()[0][0])
        if n_rows <= max_rows:
            return [relation]
        size = "count(*)"
    parts = group_parts(relation, by, max_rows, size)
    if len(parts) <= 1:
        return [relation]
    text = text_columns(relation)
    return [part_of(relation, by, values, text) for values in parts]
