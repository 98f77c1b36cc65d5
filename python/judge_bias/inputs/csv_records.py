"""Read a contract CSV file as RFC 4180 records, never by sniffing.

The dialect is fixed (comma, double quote, a quote inside a quoted field
doubled, header row, UTF-8 with or without a byte order mark, CRLF, LF or
mixed line ends, ``.csv.gz`` read as gzip); other delimiters are opt-in per
file (:class:`Dialect`). Records are counted as an RFC 4180 parser counts
them: the header is not a record, nor is an empty line; a record whose quoted
field holds line breaks counts once. ``row_number`` is that 1-based count.

Two paths give the same records:

* the fast path, for files with no bad record: Python's csv module in strict
  mode walks the file once to prove every record well-formed and count them,
  then pyarrow's multithreaded CSV reader (same dialect) reads the values, and
  the two counts must agree;
* the record-by-record path, for files with a bad record: Python's csv module
  in strict mode reads every record; a record it cannot read, or whose number
  of fields differs from the header's, becomes one bad record with its number,
  the line it starts on and its raw text. When the bad record spans several
  lines (an unbalanced quote swallows the lines after it), only its first line
  is the bad record and reading resumes on the next line, so the records after
  it are read normally.
"""

from __future__ import annotations

import csv
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from judge_bias.errors import InputError
from judge_bias.inputs.encoding import (
    DAMAGED,
    CsvFileError,
    check_text,
    damaged_error,
    decode_error,
    open_text,
)

# A field longer than this is a bad record (a runaway quoted field, usually).
MAX_FIELD_CHARS = 8 * 1024 * 1024
# Raw text kept for a bad record in rejected_rows.
MAX_RAW_CHARS = 10_000
BATCH_ROWS = 100_000
csv.field_size_limit(MAX_FIELD_CHARS)


class RecordCountMismatch(RuntimeError):
    """pyarrow and the csv module disagree on a file's records (never seen; safe path)."""


@dataclass(frozen=True)
class Dialect:
    """The CSV dialect of one file: RFC 4180 with a chosen delimiter and quote."""

    delimiter: str = ","
    quotechar: str = '"'

    NAMED = {"csv": ",", "comma": ",", "tsv": "\t", "tab": "\t", "semicolon": ";", "pipe": "|"}

    def __post_init__(self) -> None:
        for name, ch in (("delimiter", self.delimiter), ("quotechar", self.quotechar)):
            if len(ch) != 1 or ch in "\r\n":
                raise InputError(f"csv dialect: {name} must be one character, not {ch!r}")
        if self.delimiter == self.quotechar:
            raise InputError("csv dialect: delimiter and quotechar must differ")

    @classmethod
    def parse(cls, value: object) -> Dialect:
        """A dialect from its config value: None, a name (tsv, semicolon, pipe),
        one delimiter character, or a mapping with delimiter and/or quotechar."""
        if value in (None, "", {}):
            return cls()
        if isinstance(value, str):
            return cls(delimiter=cls.NAMED.get(value.lower(), value))
        if isinstance(value, dict):
            delim = str(value.get("delimiter", ","))
            return cls(
                delimiter=cls.NAMED.get(delim.lower(), delim),
                quotechar=str(value.get("quotechar", '"')),
            )
        raise InputError(f"csv dialect: {value!r} is neither a name nor a mapping")

    def csv_kwargs(self) -> dict[str, object]:
        return {
            "delimiter": self.delimiter,
            "quotechar": self.quotechar,
            "doublequote": True,
            "strict": True,
            "skipinitialspace": False,
        }


@dataclass(frozen=True)
class BadRecord:
    """A record that could not be read into the header's columns."""

    row_number: int
    line_number: int
    reason: str
    raw: str


def read_header(path: Path, dialect: Dialect) -> list[str]:
    """The header's column names as written (an empty file gives [])."""
    check_text(path)
    with open_text(path) as fh:
        reader = csv.reader(fh, **dialect.csv_kwargs())  # type: ignore[arg-type]
        try:
            for row in reader:
                if row:
                    return row
        except UnicodeDecodeError as exc:
            raise decode_error(path, exc) from exc
        except csv.Error as exc:
            raise CsvFileError(f"the header row cannot be read as CSV: {exc}") from exc
        except DAMAGED as exc:
            raise damaged_error(exc) from exc
    return []


def _count_if_clean(path: Path, dialect: Dialect, n_columns: int) -> int | None:
    """The number of records when every record is well-formed, else None."""
    with open_text(path) as fh:
        reader = csv.reader(fh, **dialect.csv_kwargs())  # type: ignore[arg-type]
        n = 0
        try:
            for row in reader:
                if row:
                    break  # the header
            for row in reader:
                if len(row) != n_columns:
                    if row:
                        return None
                    continue  # an empty line is not a record
                n += 1
        except csv.Error:
            return None
        except UnicodeDecodeError as exc:
            raise decode_error(path, exc) from exc
        except DAMAGED as exc:
            raise damaged_error(exc) from exc
    return n


def _arrow_batches(path: Path, dialect: Dialect, names: list[str]) -> Iterator[pa.RecordBatch]:
    """The file's records as Arrow batches of text (empty fields null), in order."""
    placeholders = [f"c{i}" for i in range(len(names))]
    reader = pacsv.open_csv(
        pa.input_stream(str(path)),
        read_options=pacsv.ReadOptions(
            use_threads=True,
            block_size=64 * 1024 * 1024,
            encoding="utf8",
            column_names=placeholders,
            # the header is the first non-empty row; empty rows count here
            skip_rows_after_names=_rows_through_header(path, dialect),
        ),
        parse_options=pacsv.ParseOptions(
            delimiter=dialect.delimiter,
            quote_char=dialect.quotechar,
            double_quote=True,
            escape_char=False,
            newlines_in_values=True,
            ignore_empty_lines=True,
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(placeholders, pa.string()),
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
            null_values=[""],
            check_utf8=True,
        ),
    )
    for batch in reader:
        yield pa.RecordBatch.from_arrays(batch.columns, names=names)


def _rows_through_header(path: Path, dialect: Dialect) -> int:
    with open_text(path) as fh:
        for n, row in enumerate(csv.reader(fh, **dialect.csv_kwargs()), start=1):  # type: ignore[arg-type]
            if row:
                return n
    return 0


class _Lines:
    """A line iterator that keeps the current record's lines and can put lines back."""

    def __init__(self, fh: IO[str]) -> None:
        self._fh = fh
        self._pending: deque[str] = deque()
        self.current: list[str] = []
        self.line_number = 0  # lines handed out so far

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = self._pending.popleft() if self._pending else next(self._fh)
        self.line_number += 1
        self.current.append(line)
        return line

    def start_record(self) -> None:
        self.current = []

    def put_back(self, lines: list[str]) -> None:
        self._pending.extendleft(reversed(lines))
        self.line_number -= len(lines)


def _raw(lines: list[str]) -> str:
    text = "".join(lines).rstrip("\r\n")
    return text if len(text) <= MAX_RAW_CHARS else text[:MAX_RAW_CHARS] + "…"


def _closed_by_an_opening_quote(line: str, dialect: Dialect) -> bool:
    """Whether the quote on ``line`` that closed a runaway quoted field stands where
    a field starts (after a delimiter, or first on the line): then it was meant to
    open a field of a later record, and the quote before it was never closed.
    A doubled quote is an escaped quote inside the runaway field, not its end."""
    q, j = dialect.quotechar, 0
    while (j := line.find(q, j)) >= 0:
        if line[j + 1 : j + 2] == q:
            j += 2
            continue
        return j == 0 or line[j - 1] == dialect.delimiter
    return False


def _unreadable(
    record: int,
    first_line: int,
    exc: csv.Error,
    taken: list[str],
    lines: _Lines,
    dialect: Dialect,
) -> BadRecord:
    """The bad record for a csv.Error over the lines ``taken``, putting lines back
    when the record was an unbalanced quote (see the module doc)."""
    if "field larger than field limit" in str(exc):
        raise CsvFileError(
            f"the record starting on line {first_line} has a field longer than "
            f"{MAX_FIELD_CHARS:,} characters (or a quote that is never closed within "
            "that); split the value or fix the quote"
        )
    last_line = first_line + len(taken) - 1
    where = f"line {first_line}" if last_line == first_line else (
        f"record from line {first_line}, error on line {last_line}"
    )  # fmt: skip
    reason = f"{exc} ({where})"
    # An opening quote never closed (end of data inside quotes), or closed by the
    # opening quote of a later field: only the first line is the bad record.
    unbalanced = len(taken) > 1 and (
        "unexpected end of data" in str(exc) or _closed_by_an_opening_quote(taken[-1], dialect)
    )
    if unbalanced:
        lines.put_back(taken[1:])  # resume on the next line
        return BadRecord(record, first_line, reason, _raw(taken[:1]))
    # a quoted value over several lines with a fault at its end: one bad record
    return BadRecord(record, first_line, reason, _raw(taken))


def walk_records(
    path: Path, dialect: Dialect, names: list[str], bad: list[BadRecord]
) -> Iterator[pa.RecordBatch]:
    """Every record read one by one; bad ones appended to ``bad`` (see module doc)."""
    n_columns = len(names)
    kwargs = dialect.csv_kwargs()
    with open_text(path) as fh:
        lines = _Lines(fh)
        reader = csv.reader(lines, **kwargs)  # type: ignore[arg-type]
        try:
            while not next(reader):  # the header: the first non-empty row
                pass
            record = 0
            good: list[tuple[int, list[str]]] = []
            while True:
                lines.start_record()
                first_line = lines.line_number + 1
                try:
                    row = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    record += 1
                    taken = lines.current
                    bad.append(_unreadable(record, first_line, exc, taken, lines, dialect))
                    reader = csv.reader(lines, **kwargs)  # type: ignore[arg-type]
                    continue
                if not row:
                    continue  # an empty line is not a record
                record += 1
                if len(row) != n_columns:
                    bad.append(
                        BadRecord(
                            record,
                            first_line,
                            f"{len(row)} fields where the header has {n_columns} "
                            f"(line {first_line})",
                            _raw(lines.current),
                        )
                    )
                    continue
                good.append((record, row))
                if len(good) >= BATCH_ROWS:
                    yield _batch(good, names)
                    good = []
            if good:
                yield _batch(good, names)
        except UnicodeDecodeError as exc:
            raise decode_error(path, exc) from exc
        except DAMAGED as exc:
            raise damaged_error(exc) from exc


def _batch(good: list[tuple[int, list[str]]], names: list[str]) -> pa.RecordBatch:
    numbers = [r for r, _ in good]
    columns = list(zip(*(row for _, row in good), strict=True))
    arrays = [pa.array(numbers, pa.int64())] + [
        pa.array([v if v != "" else None for v in col], pa.string()) for col in columns
    ]
    return pa.RecordBatch.from_arrays(arrays, names=["_row_number", *names])


def row_numbers(start: int, count: int) -> pa.Array:
    """The int64 record numbers start .. start + count - 1, built by numpy: a Python
    range converted value by value cost 1.1 CPU s per 10M records."""
    return pa.array(np.arange(start, start + count, dtype=np.int64))


def _numbered(batches: Iterator[pa.RecordBatch], expected: int) -> Iterator[pa.RecordBatch]:
    """Batches with 1-based record numbers prepended; checks the record count."""
    start = 1
    for batch in batches:
        numbers = row_numbers(start, batch.num_rows)
        start += batch.num_rows
        yield pa.RecordBatch.from_arrays(
            [numbers, *batch.columns], names=["_row_number", *batch.schema.names]
        )
    if start - 1 != expected:
        raise RecordCountMismatch(
            f"the CSV reader found {start - 1} records where the csv module counted {expected}"
        )


def _schema(names: list[str]) -> pa.Schema:
    return pa.schema([("_row_number", pa.int64()), *((n, pa.string()) for n in names)])


def store(
    con: duckdb.DuckDBPyConnection, table: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
) -> None:
    """Stream ``batches`` into a temp table. An exception raised while producing
    them reaches DuckDB as its own error: the original one is raised instead."""
    raised: list[BaseException] = []

    def produce() -> Iterator[pa.RecordBatch]:
        try:
            yield from batches
        except BaseException as exc:
            raised.append(exc)
            raise

    stream = pa.RecordBatchReader.from_batches(schema, produce())
    con.register("_jb_stream", stream)
    try:
        con.execute(f"create or replace temp table {table} as select * from _jb_stream")
    except duckdb.Error:
        if raised:
            raise raised[0] from None
        raise
    finally:
        con.unregister("_jb_stream")


def store_bad(con: duckdb.DuckDBPyConnection, table: str, bad: list[BadRecord]) -> None:
    """The bad records as a temp table (_row_number, _parse_error, _raw_line)."""
    frame = pa.table(
        {
            "_row_number": pa.array([b.row_number for b in bad], pa.int64()),
            "_parse_error": pa.array([b.reason for b in bad], pa.string()),
            "_raw_line": pa.array([b.raw for b in bad], pa.string()),
        }
    )
    con.register("_jb_bad", frame)
    try:
        con.execute(f"create or replace temp table {table} as select * from _jb_bad")
    finally:
        con.unregister("_jb_bad")


def read_into(
    con: duckdb.DuckDBPyConnection, table: str, path: Path, dialect: Dialect, names: list[str]
) -> list[BadRecord]:
    """Store the good records of ``path`` in temp table ``table`` (``_row_number``,
    then ``names`` as text, empty fields null); return the bad records."""
    schema = _schema(names)
    n = _count_if_clean(path, dialect, len(names))
    if n is not None:
        try:
            store(con, table, schema, _numbered(_arrow_batches(path, dialect, names), n))
            return []
        except (pa.ArrowInvalid, OSError, RecordCountMismatch, duckdb.Error):
            # pyarrow failed or disagreed (a record over its 64 MiB block, say):
            # read it record by record, the same records found one by one
            pass
    bad: list[BadRecord] = []
    store(con, table, schema, walk_records(path, dialect, names, bad))
    return bad
