"""Incremental inputs (docs/incremental.md): with the dbt var
``judge_bias_incremental`` each build's data folder is one *load* appended to the
warehouse's inputs, not a replacement of them.

A base_inputs__<kind> table then keeps every load's rows with three more columns:
``_load_id`` (the build's load: process_load_id, or the var ``judge_bias_load_id``
when plain dbt names it), ``_loaded_at`` (when it was read) and ``_load_key``, the
kind's documented key (contract.InputKind.key) as sent. dbt's delete+insert on
``_load_key`` replaces a row whose key arrives again (a re-sent row: the latest
load wins), so a row is never counted twice;
rows within one load that share a key are kept and rejected as duplicate_key,
exactly as in a full build. ``_row_number`` continues after the previous loads'
rows: it is the row's number in the accumulated log (a full build on the loads'
files concatenated in load order numbers the rows the same way)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from judge_bias.inputs.contract import KINDS
from judge_bias.inputs.loading import InputError, quote_ident
from judge_bias.inputs.relations import (
    load_kind,
    relation_key,
    relation_kinds,
    watermark_column,
)

# The columns a load adds to a base table (left out of rejected_rows.raw_values).
LOAD_COLUMNS = ("_load_id", "_loaded_at", "_load_key")
# a relation load's watermark column as judge_bias_loaded_at_column names it (the
# base keeps the column itself trimmed and in lower case, as the loader names it)
MARK_COLUMN = "_watermark_column"
# the rows a load skipped at its start, a column of loads of the version before
# MARK_COLUMN: derivable (stg_inputs__relation_counts counts them in its own SQL),
# so no longer kept; null in the rows appended to such loads, whose columns dbt
# holds fixed (on_schema_change: fail)
RETIRED_HELD = "_watermark_held"
# before the key of a relation's row whose watermark is null: never a key as sent
NULL_WATERMARK_KEY = "\x1fnull watermark\x1f"
# after the reason of a row whose watermark is null that an earlier load rejected
# too: reported again, but not new input of this load for the gates (macros/gates.sql,
# read_again, matches it)
READ_AGAIN = "; read again (an earlier load rejected it)"


def is_on(value: object) -> bool:
    """The var ``judge_bias_incremental`` as dbt renders it (a bool or its text)."""
    return str(value).strip().lower() in ("true", "1", "yes", "on")


def key_expression(kind: str) -> str:
    """SQL for the documented key of ``kind``: its key columns trimmed (an empty
    value as null, then the staging default), joined by KEY_SEPARATOR. Built by
    relations.relation_key over the load's own (text) columns, so that the key the
    loader gives a relation's row and the key a load keeps are one expression."""
    return relation_key(kind, {c: c for c in KINDS[kind].columns}, {})


def load_model(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    source: Callable[[], duckdb.DuckDBPyRelation],
    previous: str | None,
    *,
    relations: object,
    data_dir: str | Path | None,
    dialects: Mapping[str, object] | str | None,
    loaded_at: object,
    incremental: object,
    load_id: str | None,
) -> duckdb.DuckDBPyRelation:
    """The body of every base_inputs__<kind> model: its rows (load_kind: the files of
    ``data_dir`` or, on the relation route, ``source``), and with incremental inputs
    (``incremental``: the config incremental_inputs) those rows as one load appended
    to ``previous`` (as_load). The keywords are the model's configs, each read once
    in its file: dbt passes a Python model only the configs its file names
    (dbt.config.get), and puts a source in the DAG only when the file calls
    dbt.source, so both stay written out there. ``previous``: dbt.this on an
    incremental run, else None."""
    rows = load_kind(
        con,
        kind,
        source,
        relations=relations,
        data_dir=data_dir,
        dialects=dialects,
        loaded_at=loaded_at,
        previous=previous,
    )
    if not is_on(incremental):
        return rows
    # one load appended to the previous ones (docs/incremental.md)
    return as_load(con, rows, kind, load_id, previous, relations=relations, loaded_at=loaded_at)


def as_load(
    con: duckdb.DuckDBPyConnection,
    rows: duckdb.DuckDBPyRelation,
    kind: str,
    load_id: str | None,
    previous: str | None,
    relations: object = None,
    loaded_at: object = None,
) -> duckdb.DuckDBPyRelation:
    """``rows`` (a loader's relation) as one load of ``kind``: the bookkeeping and
    contract columns (a file's extra columns are not kept across loads), the load
    columns, and row numbers after those of ``previous`` (the existing base table,
    on an incremental run). ``relations``: the var judge_bias_input_relations;
    ``loaded_at``: the var judge_bias_loaded_at_column. On the relation route the
    relation's watermark column is kept as it is (the next load starts above its
    largest value: judge_bias.inputs.relations.load_kind), and a row whose
    watermark is null (rejected, read again by every load) gets a ``_load_key`` of
    its own (NULL_WATERMARK_KEY before its key), so that it replaces only itself;
    the earlier loads' such rows are deleted from ``previous`` first (the load reads
    them again), so a row that got its value since is held once.

    InputError, one line, for what plain ``dbt build --vars '{judge_bias_incremental:
    true}'`` cannot do and ``judge-bias build --incremental`` refuses before dbt runs
    (judge_bias.warehouse.incremental): an append to inputs built without the var
    (not loads)."""
    load_id = load_id or process_load_id()
    offset = 0
    now = datetime.now(UTC).replace(tzinfo=None)
    if previous is not None:
        if "_loaded_at" not in con.sql(f"select * from {previous} limit 0").columns:
            raise InputError(
                f"{kind}: {previous} was built without judge_bias_incremental: its inputs "
                "are not loads; build once with dbt build --full-refresh --vars "
                "'{judge_bias_incremental: true}' (judge-bias build --incremental "
                "--full-refresh), then append"
            )
        sql = f"select coalesce(max(_row_number), 0), max(_loaded_at) from {previous}"
        offset, last = con.sql(sql).fetchall()[0]
        if last is not None and now <= last:
            # the build's load is the one read last (macros/incremental.sql,
            # current_load_id): a clock behind the last load would make the previous
            # load current again and leave this one's rows out of the facts
            raise ValueError(
                f"{kind}: this machine's clock (UTC {now:%Y-%m-%d %H:%M:%S}) is not later "
                f"than the warehouse's last load (UTC {last:%Y-%m-%d %H:%M:%S}); an "
                "incremental load must be read after the last one: set the clock right, "
                "or rebuild with --full-refresh"
            )
    now_text = now.isoformat(sep=" ")
    parse_error = "_parse_error"
    columns = ", ".join(quote_ident(c) for c in KINDS[kind].columns)
    key = key_expression(kind)
    mark = watermark_column(rows.columns, loaded_at) if relation_kinds(relations) else None
    if previous is not None:
        _same_watermark(con, kind, previous, mark, loaded_at)
    if mark is not None:
        # the load's start (the previous loads' largest watermark; null: the first
        # load), which stg_inputs__relation_counts counts the relation above
        had = [] if previous is None else con.sql(f"select * from {previous} limit 0").columns
        kept = mark in had
        above = f"(select max({quote_ident(mark)}) from {previous})" if kept else "null"
        if kept:
            # every load reads again every row whose watermark is null: the earlier
            # loads' such rows leave the table (a row that got its value since is
            # then held once, by its key, not twice); their keys and values are kept
            # apart (with how many rows have them), so that such a row read again as
            # it was says so (READ_AGAIN) and is not new input of this load for the
            # gates (a quiet load with one unfixed row publishes)
            rejected = f"_judge_bias_rejected_{kind}"
            con.execute(
                f"create or replace temp table {rejected} as select _load_key, {columns}, "
                f"count(*) as _jb_rows from {previous} where starts_with(_load_key, ?) "
                "group by all",
                [NULL_WATERMARK_KEY],
            )
            con.execute(
                f"delete from {previous} where starts_with(_load_key, ?)", [NULL_WATERMARK_KEY]
            )
        typed = f"cast({above} as {_type_of(rows, mark)})"
        columns += f", {quote_ident(mark)}, {typed} as _watermark_above"
        # and its end, the largest watermark it selected (its start when it selected
        # none but null ones), so that the count does not take in the rows written
        # while the build runs
        through = f"(select max({quote_ident(mark)}) from _judge_bias_load_{kind})"
        columns += f", coalesce({through}, {typed}) as _watermark_through"
        # the column's name as the var spells it (the summary shows it), but in loads
        # read before it was kept: their columns are fixed
        if previous is None or MARK_COLUMN in had:
            spelled = str(loaded_at).strip().replace("'", "''")
            columns += f", cast('{spelled}' as varchar) as {MARK_COLUMN}"
        if RETIRED_HELD in had:
            columns += f", cast(null as bigint) as {RETIRED_HELD}"
        null_key = f"'{NULL_WATERMARK_KEY}' || {key}"
        key = f"case when {quote_ident(mark)} is null then {null_key} else {key} end"
    name = f"_judge_bias_load_{kind}"
    con.register(name, rows)
    if mark is not None and kept:
        # a null-watermark row is read again when an earlier load rejected a row of
        # its key and contract values (is not distinct from), each earlier row
        # matched once: a row with corrected values, or a second row of the key, is
        # new input for the gates
        again = f"_judge_bias_again_{kind}"
        contract = [quote_ident(c) for c in KINDS[kind].columns]
        same = " and ".join(f"_r.{c} is not distinct from _l.{c}" for c in contract)
        con.execute(
            f"create or replace temp table {again} as select _l._row_number from "
            f"(select _row_number, {null_key} as _jb_key, {', '.join(contract)}, "
            f"row_number() over (partition by {null_key}, {', '.join(contract)} "
            f"order by _row_number) as _jb_nth from {name} "
            f"where {quote_ident(mark)} is null) as _l "
            f"join {rejected} as _r on _r._load_key = _l._jb_key and {same} "
            "where _l._jb_nth <= _r._jb_rows"
        )
        text = READ_AGAIN.replace("'", "''")
        parse_error = (
            f"case when {quote_ident(mark)} is null and _row_number in (select _row_number "
            f"from {again}) then _parse_error || '{text}' else _parse_error end"
        )
    return con.sql(
        f"select _row_number + {int(offset)} as _row_number, _source_file, "
        f"{parse_error} as _parse_error, "
        f"_raw_line, {columns}, '{load_id.replace(chr(39), '')}' as _load_id, "
        f"timestamp '{now_text}' as _loaded_at, {key} as _load_key "
        f"from {name}"
    )


def _same_watermark(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    previous: str,
    mark: str | None,
    loaded_at: object,
) -> None:
    """InputError, one line, when the relation's watermark column (``mark``; None:
    none) is not the one the previous loads kept: the relation gained or lost the
    column of judge_bias_loaded_at_column, or the var changed, since they were read
    (the loaders' columns change: dbt would stop on the schema change)."""
    held = con.sql(f"select * from {previous} limit 0").columns
    if mark is None and "_watermark_above" not in held:
        return
    if mark is not None and "_watermark_above" in held and mark in held:
        if "_watermark_through" in held:
            return
        # loads of an earlier version: the bookkeeping column since added would stop
        # dbt on the schema change, in words naming neither the cause nor the fix
        raise InputError(
            f"{kind}: the previous loads in {previous} were read by an earlier version, "
            "without the column _watermark_through: the loads cannot go on; rebuild the "
            "inputs from the relations with --full-refresh"
        )
    name = str(loaded_at or "").strip() or "(unset)"
    if mark is None:
        now, then = f"has no watermark column {name}", "have one"
    elif "_watermark_above" not in held:
        now, then = f"has the watermark column {name}", "have none"
    else:
        now, then = f"has the watermark column {name}", "kept another"
    raise InputError(
        f"{kind}: the relation {now} (judge_bias_loaded_at_column) and the previous loads "
        f"in {previous} {then}: the loads cannot go on; rebuild the inputs from the "
        "relations with --full-refresh"
    )


def _type_of(rows: duckdb.DuckDBPyRelation, column: str) -> str:
    """The DuckDB type of ``column`` of ``rows``."""
    return str(dict(zip(rows.columns, rows.types, strict=True))[column])


_PROCESS_LOAD: list[str] = []
_PROCESS_LOAD_LOCK = threading.Lock()


def process_load_id() -> str:
    """The load id when the var judge_bias_load_id is not given (judge-bias build, and
    plain ``dbt build`` unless it names the load): one per process, so every loader
    of one dbt command writes the same id, under a lock as dbt runs two loaders at
    once in threads (functools.cache may call the function twice then). (A default
    rendered in dbt_project.yml would be fixed at parse time and, through dbt's
    partial parsing, repeat a previous command's id.)"""
    with _PROCESS_LOAD_LOCK:
        if not _PROCESS_LOAD:
            _PROCESS_LOAD.append(new_load_id())
        return _PROCESS_LOAD[0]


def new_load_id() -> str:
    """A load id: the UTC time of the build, to the microsecond (sorts in load order)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
