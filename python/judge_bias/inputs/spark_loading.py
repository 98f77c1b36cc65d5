"""Load the input files into Spark tables: the Spark route's loaders (docs/spark.md).

dbt-spark runs no dbt Python model in ``session`` mode (nor on plain Spark), so
the ``base_inputs__<kind>`` models cannot run there; these functions write the
same tables (same columns, same all-text values, same record numbers) with
Spark's own readers before ``dbt build --target spark``, and the staging models
read them through the ``spark_inputs`` source (macro ``input_table``).

CSV: Spark's reader with an explicit RFC 4180 dialect (quote ``"``, a quote
inside a quoted field doubled, multiLine so quoted line breaks stay in their
field, header row, UTF-8; the delimiter and quote of the ``csv_dialects`` var),
every column read as text, in PERMISSIVE mode with a corrupt-record column:
a record whose number of fields differs from the header's keeps its number and
comes back with ``_parse_error`` and ``_raw_line`` set (reason code
malformed_row in staging), never dropped. Record numbers count records as the
DuckDB route does (empty lines are not records; a quoted line break does not
start one): multiLine reads a file as one ordered partition, numbered in order.
File-level checks (missing required column, duplicate column, not UTF-8) are
the DuckDB route's own (judge_bias.inputs.loading), with the same messages.

Known difference (docs/spark.md): Spark's parser is lenient where Python's csv
module in strict mode is not; a stray quote inside an unquoted field
(``a,"b"c,d``) is read as text by Spark and is a malformed_row on DuckDB.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judge_bias.inputs.contract import KINDS, InputKind
from judge_bias.inputs.csv_records import MAX_RAW_CHARS, BadRecord, Dialect, walk_records
from judge_bias.inputs.encoding import CsvFileError
from judge_bias.inputs.loading import (
    InputError,
    dialect_for,
    input_file,
    map_columns,
    parquet_columns,
    read_header,
)

CORRUPT = "_corrupt_record"


def _quote(name: str) -> str:
    """A Spark SQL identifier, whatever characters it holds."""
    return "`" + name.replace("`", "``") + "`"


def csv_options(dialect: Dialect) -> dict[str, str]:
    """Spark CSV reader options for one contract file (RFC 4180, never inferred)."""
    return {
        "header": "true",
        "enforceSchema": "true",  # the header's names are checked by map_columns
        "mode": "PERMISSIVE",
        "columnNameOfCorruptRecord": CORRUPT,
        "sep": dialect.delimiter,
        "quote": dialect.quotechar,
        "escape": dialect.quotechar,  # a quote inside a quoted field is doubled
        "multiLine": "true",
        "encoding": "UTF-8",
        "ignoreLeadingWhiteSpace": "false",
        "ignoreTrailingWhiteSpace": "false",
        "inferSchema": "false",
        "unescapedQuoteHandling": "STOP_AT_DELIMITER",
        "maxCharsPerColumn": "-1",
    }


def _numbered(frame: Any) -> Any:
    """``frame`` with _row_number, 1-based in file order (one file is read in order:
    monotonically_increasing_id grows with the partition and the position in it)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = Window.orderBy(F.monotonically_increasing_id())
    return frame.withColumn("_row_number", F.row_number().over(order).cast("bigint"))


def _read_csv(spark: Any, path: Path, spec: InputKind, dialect: Dialect) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    try:
        header = read_header(path, dialect)
    except CsvFileError as exc:
        raise InputError(f"{path}: {exc}") from exc
    if not header:
        raise InputError(f"{path}: the file is empty (not even a header row); "
                         "write the header row of the contract")  # fmt: skip
    mapping = map_columns(path, spec, header)
    names = [f"_c{i}" for i in range(len(header))]
    schema = StructType([StructField(n, StringType()) for n in [*names, CORRUPT]])
    raw = spark.read.schema(schema).options(**csv_options(dialect)).csv(str(path))
    # Spark refuses a query that reads only the corrupt-record column of a CSV scan
    raw = _numbered(raw.select(*names, CORRUPT))
    bad = F.col(CORRUPT).isNotNull()
    position = {col: f"_c{header.index(orig)}" for col, orig in mapping.items()}
    n_fields = F.size(F.split(F.col(CORRUPT), _split_pattern(dialect.delimiter)))
    columns = [
        F.col("_row_number"),
        F.lit(str(path)).alias("_source_file"),
        F.when(
            bad,
            F.concat(
                F.lit(f"expected {len(header)} fields, got about "),
                n_fields.cast("string"),
                F.lit(" (Spark CSV reader)"),
            ),
        ).alias("_parse_error"),
        F.when(bad, F.substring(F.col(CORRUPT), 1, MAX_RAW_CHARS)).alias("_raw_line"),
    ]
    for col in spec.columns:
        value = F.col(position[col]) if col in position else F.lit(None).cast("string")
        columns.append(F.when(~bad, value).alias(col))
    for extra in (k for k in mapping if k not in spec.columns):
        columns.append(F.when(~bad, F.col(position[extra])).alias(extra))
    # the bad record numbers (a data column is read too: Spark refuses a query
    # of the corrupt-record column alone)
    spark_bad = {
        row[0] for row in raw.filter(bad).select("_row_number", F.length(names[0])).collect()
    }
    frame = raw.select(*columns)
    if not spark_bad:
        return frame
    return _exact_bad_records(spark, frame, spark_bad, path, dialect, names)


def _exact_bad_records(
    spark: Any, frame: Any, spark_bad: set[int], path: Path, dialect: Dialect, names: list[str]
) -> Any:
    """``frame`` with the DuckDB route's own _parse_error and _raw_line on its bad
    records, when Spark found any: the file is then walked record by record by
    judge_bias.inputs.csv_records (what the DuckDB route does with a file that
    has a bad record), and when both found the same bad record numbers, Python's
    reasons ("9 fields where the header has 8 (line 12)") and raw text replace
    Spark's. Clean files (the usual case) are read by Spark alone."""
    from pyspark.sql import functions as F

    python_bad: list[BadRecord] = []
    try:
        for _ in walk_records(path, dialect, names, python_bad):
            pass  # the good records: Spark's
    except CsvFileError as exc:
        raise InputError(f"{path}: {exc}") from exc
    if {b.row_number for b in python_bad} != spark_bad:
        return frame  # the parsers disagree on which records are bad: Spark's reasons
    exact = spark.createDataFrame(
        [(b.row_number, b.reason, b.raw) for b in python_bad],
        "_row_number bigint, _exact_error string, _exact_raw string",
    )
    order = frame.columns
    joined = frame.join(F.broadcast(exact), "_row_number", "left")
    return joined.select(
        *(
            F.coalesce(F.col("_exact_error"), F.col(c)).alias(c)
            if c == "_parse_error"
            else F.coalesce(F.col("_exact_raw"), F.col(c)).alias(c)
            if c == "_raw_line"
            else F.col(c)
            for c in order
        )
    )


def _split_pattern(delimiter: str) -> str:
    import re

    return re.escape(delimiter)


def _read_parquet(spark: Any, path: Path, spec: InputKind) -> Any:
    from pyspark.sql import functions as F

    mapping = map_columns(path, spec, parquet_columns(path))
    frame = _numbered(spark.read.parquet(str(path)))
    columns = [
        F.col("_row_number"),
        F.lit(str(path)).alias("_source_file"),
        F.lit(None).cast("string").alias("_parse_error"),
        F.lit(None).cast("string").alias("_raw_line"),
    ]
    for col in spec.columns:
        value = F.col(_quote(mapping[col])).cast("string") if col in mapping else F.lit(None)
        columns.append(value.cast("string").alias(col))
    for extra in (k for k in mapping if k not in spec.columns):
        columns.append(F.col(_quote(mapping[extra])).alias(extra))
    return frame.select(*columns)


def _empty(spark: Any, spec: InputKind) -> Any:
    cols = [
        "cast(null as bigint) as _row_number",
        "cast(null as string) as _source_file",
        "cast(null as string) as _parse_error",
        "cast(null as string) as _raw_line",
        *(f"cast(null as string) as {_quote(c)}" for c in spec.columns),
    ]
    return spark.sql(f"select {', '.join(cols)} where false")


def read_input(
    spark: Any,
    data_dir: str | Path,
    kind: str,
    dialects: Mapping[str, object] | str | None = None,
) -> Any:
    """``kind`` from ``data_dir`` as a Spark DataFrame with the columns of
    judge_bias.inputs.loading.load_input (the base_inputs__<kind> table)."""
    spec = KINDS[kind]
    path = input_file(data_dir, kind)
    if path is None:
        return _empty(spark, spec)
    path = path.resolve()
    if path.suffix == ".parquet":
        return _read_parquet(spark, path, spec)
    return _read_csv(spark, path, spec, dialect_for(dialects, kind))


def load_inputs(
    spark: Any,
    data_dir: str | Path,
    schema: str,
    dialects: Mapping[str, object] | str | None = None,
) -> dict[str, int]:
    """Write every base_inputs__<kind> table into ``schema``; kind -> rows written."""
    spark.sql(f"create database if not exists {_quote(schema)}")
    counts: dict[str, int] = {}
    for kind in KINDS:
        frame = read_input(spark, data_dir, kind, dialects)
        table = f"{_quote(schema)}.{_quote('base_inputs__' + kind)}"
        spark.sql(f"drop table if exists {table}")
        frame.write.format("parquet").saveAsTable(f"{schema}.base_inputs__{kind}")
        counts[kind] = spark.table(table).count()
    return counts
