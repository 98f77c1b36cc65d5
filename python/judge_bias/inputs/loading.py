"""Load one input file of the contract into DuckDB, losing nothing.

Every value is read as text (staging casts and rejects), every record keeps
its 1-based record number, and records the CSV parser cannot split into the
header's columns come back as rows with ``_parse_error`` set instead of
disappearing (CSV parsing: judge_bias.inputs.csv_records, RFC 4180, never sniffed).
A missing optional file gives an empty table with every contract column.
File-level problems (a missing required column, a duplicate column name, a
file that is not UTF-8 text, an optional file that exists but cannot be read)
raise InputError with one line naming the file, what is wrong and the fix.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path

import duckdb

from judge_bias.errors import InputError
from judge_bias.inputs.contract import FILE_SUFFIXES, KINDS, NON_CONTRACT_FILES, InputKind
from judge_bias.inputs.csv_records import (
    Dialect,
    read_header,
    read_into,
    row_numbers,
    store,
    store_bad,
)
from judge_bias.inputs.encoding import CsvFileError

META_COLUMNS: tuple[str, ...] = ("_row_number", "_source_file", "_parse_error", "_raw_line")


def quote_ident(name: str) -> str:
    """Quote an identifier for DuckDB, whatever characters it holds."""
    return '"' + name.replace('"', '""') + '"'


def _kind_of(name: str) -> tuple[str, str] | None:
    """(kind, suffix) when ``name`` is exactly a contract file name."""
    for suffix in FILE_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in KINDS:
            return name[: -len(suffix)], suffix
    return None


def input_file(data_dir: str | Path, kind: str) -> Path | None:
    """``find_input_file`` in a folder that must exist; None for an absent optional
    file, an InputError for an absent required one (both engines' loaders)."""
    if not Path(data_dir).is_dir():
        raise InputError(f"data_dir {data_dir!s} is not a directory")
    path = find_input_file(data_dir, kind)
    if path is None and KINDS[kind].is_required_file:
        raise InputError(f"{data_dir}: the required file {kind}.csv (or {kind}.parquet) is missing")
    return path


def find_input_file(data_dir: str | Path, kind: str) -> Path | None:
    """The file of ``kind`` in ``data_dir`` (CSV, gzipped CSV or Parquet), or None
    when absent. A file of that name that is not a readable regular file (a
    directory, a broken or looping link, no read permission) is an error."""
    data_dir = Path(data_dir)
    found = []
    for suffix in FILE_SUFFIXES:
        path = data_dir / f"{kind}{suffix}"
        if not os.path.lexists(path):
            continue
        if path.is_dir():
            raise InputError(f"{path}: is a directory, not a file; remove it or put the file there")
        if not path.exists():
            raise InputError(f"{path}: is a broken or looping symbolic link; fix or remove it")
        if not path.is_file():
            raise InputError(f"{path}: is not a regular file; replace it with the {kind} file")
        if not os.access(path, os.R_OK):
            raise InputError(f"{path}: cannot be read (permission denied); make it readable")
        found.append(path)
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise InputError(f"{data_dir}: both {names} exist for '{kind}'; keep one of them")
    return found[0] if found else None


def empty_relation(con: duckdb.DuckDBPyConnection, spec: InputKind) -> duckdb.DuckDBPyRelation:
    cols = [
        "cast(null as bigint) as _row_number",
        "cast(null as varchar) as _source_file",
        "cast(null as varchar) as _parse_error",
        "cast(null as varchar) as _raw_line",
        *(f"cast(null as varchar) as {quote_ident(c)}" for c in spec.columns),
    ]
    return con.sql(f"select {', '.join(cols)} where false")


def map_columns(path: Path | str, spec: InputKind, file_columns: list[str]) -> dict[str, str]:
    """Map contract column -> file column (case and whitespace insensitive); ``path``
    names the file (or the relation) in the errors."""
    canonical: dict[str, str] = {}
    for position, col in enumerate(file_columns, start=1):
        norm = col.strip().lstrip("\ufeff").lower()
        if norm in canonical:
            first = [c.strip().lstrip("\ufeff").lower() for c in file_columns].index(norm) + 1
            raise InputError(
                f"{path}: column '{norm}' appears twice in the header (columns {first} and "
                f"{position}); rename or remove one of them"
            )
        if not norm:
            raise InputError(
                f"{path}: column {position} of the header has no name; name it or remove it"
            )
        canonical[norm] = col
    missing = [c for c in spec.required if c not in canonical]
    if missing:
        raise InputError(
            f"{path}: missing required column(s) {', '.join(repr(c) for c in missing)}; "
            f"the header has {', '.join(repr(c) for c in file_columns) or 'no columns'}"
        )
    for group in spec.one_of:
        if not any(c in canonical for c in group):
            raise InputError(
                f"{path}: needs at least one of the columns "
                f"{', '.join(repr(c) for c in group)}; none is in the header"
            )
    return {c: canonical[c] for c in spec.columns if c in canonical} | {
        # extra columns keep their own (trimmed) names
        norm: orig
        for norm, orig in canonical.items()
        if norm not in spec.columns and norm not in META_COLUMNS
    }


def _select_list(spec: InputKind, mapping: dict[str, str]) -> str:
    parts = []
    for col in spec.columns:
        if col in mapping:
            parts.append(f"cast({quote_ident(mapping[col])} as varchar) as {quote_ident(col)}")
        else:
            parts.append(f"cast(null as varchar) as {quote_ident(col)}")
    for norm, orig in mapping.items():
        if norm not in spec.columns:
            parts.append(f"{quote_ident(orig)} as {quote_ident(norm)}")
    return ", ".join(parts)


def _load_csv(
    con: duckdb.DuckDBPyConnection, path: Path, spec: InputKind, dialect: Dialect
) -> duckdb.DuckDBPyRelation:
    try:
        header = read_header(path, dialect)
        if not header:
            raise InputError(f"{path}: the file is empty (not even a header row); "
                             "write the header row of the contract")  # fmt: skip
        mapping = map_columns(path, spec, header)
        tmp, bad_table = f"_jb_read_{spec.name}", f"_jb_bad_{spec.name}"
        # positional names: the header's own may repeat once normalised away
        names = [f"_c{i}" for i in range(len(header))]
        bad = read_into(con, tmp, path, dialect, names)
    except CsvFileError as exc:
        raise InputError(f"{path}: {exc}") from exc
    store_bad(con, bad_table, bad)
    position = {col: f"_c{header.index(orig)}" for col, orig in mapping.items()}
    source = str(path).replace("'", "''")
    good_cols = ", ".join(
        f"r.{position[c]} as {quote_ident(c)}"
        if c in position
        else f"cast(null as varchar) as {quote_ident(c)}"
        for c in spec.columns
    )
    extras = [k for k in mapping if k not in spec.columns]
    if extras:
        good_cols += ", " + ", ".join(f"r.{position[k]} as {quote_ident(k)}" for k in extras)
    nulls = ", ".join(
        f"cast(null as varchar) as {quote_ident(c)}" for c in [*spec.columns, *extras]
    )
    return con.sql(
        f"select r._row_number, '{source}' as _source_file, "
        f"cast(null as varchar) as _parse_error, cast(null as varchar) as _raw_line, "
        f"{good_cols} from {tmp} as r "
        "union all by name "
        f"select _row_number, '{source}' as _source_file, _parse_error, _raw_line, {nulls} "
        f"from {bad_table}"
    )


def parquet_columns(path: Path) -> list[str]:
    """The column names a Parquet file declares (InputError when it is not Parquet)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path).names
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot be read as Parquet ({exc}); write it again") from exc


def parquet_rows(path: Path) -> int:
    """The rows a Parquet file declares in its footer (pyarrow's metadata: the
    file's num_rows), read apart from the loaders' readers, so that the rows a
    build read can be reconciled with the file (build.check_file_rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot be read as Parquet ({exc}); write it again") from exc


# Characters DuckDB's file readers take as a glob pattern in a path.
GLOB_CHARACTERS = frozenset("*?[]{}")


def _native_parquet(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    spec: InputKind,
    names: list[str],
    mapping: dict[str, str],
) -> duckdb.DuckDBPyRelation | None:
    """The file read by DuckDB's own Parquet reader, as a relation dbt's table reads
    once (no temp table: at 10M ratings 6.2 against 11.3 CPU s for the pyarrow
    route), or None when that reader could read other columns or files than the
    file's: a path with glob characters (``data[1]`` would read ``data1``), or column
    names DuckDB would rename (a repeated name, judge -> judge_1, is refused by
    map_columns first; ``file_row_number`` is the reader's own column). Row numbers
    are the rows' positions in the file, as the pyarrow route numbers them."""
    resolved = str(path.resolve())
    if GLOB_CHARACTERS & set(resolved) or any(n.lower() == "file_row_number" for n in names):
        return None
    quoted = resolved.replace("'", "''")
    # hive_partitioning off: a parent folder named like judge=x would otherwise
    # replace the file's judge column with 'x' in every row (review16c)
    scan = f"read_parquet('{quoted}', file_row_number = true, hive_partitioning = false)"
    try:
        read = [row[0] for row in con.execute(f"describe select * from {scan}").fetchall()]
    except duckdb.Error:
        return None  # the pyarrow route reads it, or says what is wrong
    if read != [*names, "file_row_number"]:
        return None
    source = str(path).replace("'", "''")
    return con.sql(
        f"select file_row_number + 1 as _row_number, '{source}' as _source_file, "
        "cast(null as varchar) as _parse_error, cast(null as varchar) as _raw_line, "
        f"{_select_list(spec, mapping)} from {scan}"
    )


def _load_parquet(
    con: duckdb.DuckDBPyConnection, path: Path, spec: InputKind
) -> duckdb.DuckDBPyRelation:
    """The file read by DuckDB (_native_parquet) or, where DuckDB's reader could
    read something else, streamed by pyarrow, batch by batch, into a temp table:
    DuckDB's own reader takes a path as a glob pattern (a folder named ``data[1]``
    would read ``data1``), and would rename a repeated column name (judge -> judge_1)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = parquet_columns(path)
    mapping = map_columns(path, spec, names)
    native = _native_parquet(con, path, spec, names, mapping)
    if native is not None:
        return native
    tmp = f"_jb_read_{spec.name}"
    reader = pq.ParquetFile(path)
    fields = list(reader.schema_arrow)
    schema = pa.schema(
        [("_row_number", pa.int64()), *((f"_c{i}", f.type) for i, f in enumerate(fields))]
    )

    def batches():
        start = 1
        for batch in reader.iter_batches(batch_size=100_000):
            numbers = row_numbers(start, batch.num_rows)
            start += batch.num_rows
            yield pa.RecordBatch.from_arrays([numbers, *batch.columns], schema=schema)

    store(con, tmp, schema, batches())
    position = {col: f"_c{[f.name for f in fields].index(orig)}" for col, orig in mapping.items()}
    source = str(path).replace("'", "''")
    return con.sql(
        f"select _row_number, '{source}' as _source_file, "
        "cast(null as varchar) as _parse_error, cast(null as varchar) as _raw_line, "
        f"{_select_list(spec, position)} from {tmp}"
    )


def load_input(
    con: duckdb.DuckDBPyConnection,
    data_dir: str | Path,
    kind: str,
    dialects: Mapping[str, object] | str | None = None,
) -> duckdb.DuckDBPyRelation:
    """Read ``kind`` from ``data_dir`` as an all-text relation with row numbers.

    Columns: ``_row_number`` (1-based data row), ``_source_file``,
    ``_parse_error`` and ``_raw_line`` (set only for records the CSV parser
    could not split), every contract column of the kind (null when the file
    lacks an optional one), then the file's extra columns. ``dialects``: the
    ``csv_dialects`` var, kind -> dialect (judge_bias.inputs.csv_records.Dialect.parse).
    """
    spec = KINDS[kind]
    path = input_file(data_dir, kind)
    if path is None:
        return empty_relation(con, spec)
    if path.suffix == ".parquet":
        return _load_parquet(con, path, spec)
    return _load_csv(con, path, spec, dialect_for(dialects, kind))


def dialect_for(dialects: Mapping[str, object] | str | None, kind: str) -> Dialect:
    """The CSV dialect of ``kind`` from the ``csv_dialects`` var (a mapping, or its
    text as dbt renders it)."""
    if isinstance(dialects, str):
        import ast

        try:
            dialects = ast.literal_eval(dialects) if dialects.strip() else {}
        except (ValueError, SyntaxError) as exc:
            raise InputError(
                f"csv_dialects: {dialects!r} is not a mapping of file kind -> dialect; "
                "write e.g. {judge_ratings: tsv}"
            ) from exc
    dialects = dialects or {}
    if not isinstance(dialects, Mapping):
        raise InputError(f"csv_dialects: {dialects!r} is not a mapping of file kind -> dialect")
    unknown = sorted(set(dialects) - set(KINDS))
    if unknown:
        raise InputError(
            f"csv_dialects: {', '.join(unknown)} is not an input file kind; "
            f"use one of {', '.join(KINDS)}"
        )
    try:
        return Dialect.parse(dialects.get(kind))
    except ValueError as exc:
        raise InputError(f"csv_dialects[{kind}]: {exc}") from exc


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word.lower(), choices, n=1, cutoff=0.75)
    return f"; did you mean '{close[0]}'?" if close else ""


# What `judge-bias build --db DIR/w.duckdb` writes beside its warehouse (the
# README's own recipe puts it in the data folder): not input, not warned of.
WAREHOUSE_SUFFIXES = (".duckdb", ".duckdb.wal", ".duckdb.tmp", ".build.json",
                      ".validation.json", ".dbt", ".spark", ".before-load",
                      ".rejected-load.parquet")  # fmt: skip


def _stray_file_warning(path: Path) -> str | None:
    """A warning for a file in the data folder that is not a contract file."""
    name = path.name
    if name.startswith(".") or name in NON_CONTRACT_FILES or _kind_of(name):
        return None
    if name.endswith(WAREHOUSE_SUFFIXES) or ".duckdb.wal.stale-" in name:
        return None
    contract_names = [f"{k}{s}" for k in KINDS for s in FILE_SUFFIXES]
    hint = _did_you_mean(name, contract_names)
    if not hint and _kind_of(name.lower()):
        hint = f"; did you mean '{name.lower()}'? (names are case-sensitive)"
    return f"{path}: not an input file of the contract, not read{hint}"


def check_inputs(
    data_dir: str | Path, dialects: Mapping[str, object] | str | None = None
) -> list[str]:
    """File-level checks of a data folder before dbt runs (the same checks the
    loaders make): raises InputError, whose message is one line naming the file,
    the column or record, what is wrong and how to fix it; returns the warnings
    (files that are not contract files, near-miss column names), one line each.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise InputError(f"{data_dir}: not a directory; pass the folder of input files with --data")
    warnings = [w for p in sorted(data_dir.iterdir()) if (w := _stray_file_warning(p))]
    for kind, spec in KINDS.items():
        path = find_input_file(data_dir, kind)
        if path is None:
            if spec.is_required_file:
                raise InputError(
                    f"{data_dir}: the required file {kind}.csv (or {kind}.parquet) is missing"
                )
            continue
        if path.suffix == ".parquet":
            columns = parquet_columns(path)
        else:
            try:
                columns = read_header(path, dialect_for(dialects, kind))
            except CsvFileError as exc:
                raise InputError(f"{path}: {exc}") from exc
            if not columns:
                raise InputError(f"{path}: the file is empty (not even a header row); "
                                 "write the header row of the contract")  # fmt: skip
        mapping = map_columns(path, spec, columns)
        for extra in (k for k in mapping if k not in spec.columns):
            hint = _did_you_mean(extra, list(spec.columns))
            if hint:
                warnings.append(
                    f"{path}: column '{extra}' is not a contract column and is kept as an "
                    f"extra column{hint}"
                )
    return warnings
