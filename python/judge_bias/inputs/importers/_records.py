"""Generic records: a CSV, JSON lines, JSON or Parquet file read as a stream of
dicts, and dotted paths into them (``gradingResult.score``, ``scores.0.value``).

Shared by the mapping importer, ``--gold`` and ``judge-bias doctor``. A file's
kind comes from its suffix, else from its first bytes; a file that is none of
these (a binary, UTF-16 text, a zip) is named in a one-line error.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from judge_bias.errors import InputError
from judge_bias.inputs.encoding import describe_bytes

KINDS = ("csv", "tsv", "jsonl", "json", "parquet")
SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
# A JSON document (not JSON lines) is parsed whole: above this size, ask for JSONL.
MAX_JSON_BYTES = 512 * 1024 * 1024
MISSING = object()  # a path that does not resolve (distinct from a JSON null)
# pandas' to_json(orient="split"): with and without its index
SPLIT_KEYS = ({"columns", "data"}, {"columns", "data", "index"})


def file_kind(path: str | Path, given: str | None = None) -> str:
    """csv, tsv, jsonl, json or parquet: ``given``, else the suffix (``.gz`` aside),
    else the first bytes; a one-line error for anything else."""
    path = Path(path)
    if given:
        if given not in KINDS:
            raise InputError(f"{path}: format {given!r} is not one of {', '.join(KINDS)}")
        return given
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    name = path.name.lower().removesuffix(".gz")
    for suffix, kind in SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    head = _head(path)
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "json"
    if text.startswith(b"{"):
        first = text.split(b"\n", 1)[0].strip()
        return "jsonl" if first.endswith(b"}") and b"\n" in text.strip() else "json"
    return "csv"


def _head(path: Path, n: int = 4096) -> bytes:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as fh:
        return fh.read(n)


def _text(path: Path) -> IO[str]:
    head = _head(path)
    what = describe_bytes(head)
    if what and not path.name.lower().endswith(".gz"):
        raise InputError(f"{path}: not CSV or JSON text: it is {what}")
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


def long_row_causes(trailing: bool) -> str:
    """The likely causes of CSV rows longer than their header, the likelier first
    (``trailing``: every extra cell is empty), said as likely, not as fact."""
    comma = "a trailing comma at the line's end (every extra cell empty)"
    quote = 'a quote escaped with a backslash (\\") splitting a text that holds a comma'
    return f"likely {comma if trailing else quote}, or {quote if trailing else comma}"


def iter_records(
    path: str | Path, kind: str | None = None, records: str = "", long_rows: str = "refuse"
) -> Iterator[dict]:
    """The file's records as dicts, streamed (a JSON document is parsed whole).
    ``records``: for a JSON document, the dotted path to its list of records.

    A CSV row of more cells than its header has a cell split in two and every later
    value shifted (session 26: a prompt_id read as 0.000352): ``long_rows="refuse"``
    (the mapping importer, ``--gold``) refuses the file at the first such row in
    one line naming it, the cell counts and the likely causes; the reading is a
    stream, so it cannot first count how many rows are long, and no value of the
    row can be mapped. ``"keep"`` (the doctor's profile of a file) keeps the extra
    cells under ``_extra_fields``."""
    path = Path(path)
    kind = file_kind(path, kind)
    try:
        if kind == "parquet":
            yield from _parquet(path)
        elif kind in ("csv", "tsv"):
            with _text(path) as fh:
                reader = csv.DictReader(fh, delimiter="\t" if kind == "tsv" else ",")
                for row in reader:
                    if None in row:  # more fields than the header names
                        extra = row.pop(None)
                        if long_rows != "keep":
                            width = len(reader.fieldnames or [])
                            raise InputError(
                                f"{path}: line {reader.line_num}: {width + len(extra)} cells "
                                f"under a header of {width} columns, every value after the "
                                "split cell shifted: not read; "
                                + long_row_causes(all(c == "" for c in extra))
                            )
                        row["_extra_fields"] = extra
                    yield row
        elif kind == "jsonl":
            with _text(path) as fh:
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        value = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(f"{path}:{number}: not a JSON line ({exc})") from exc
                    if not isinstance(value, dict):
                        raise InputError(f"{path}:{number}: expected a JSON object per line")
                    yield value
        else:
            yield from _json_document(path, records)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not {kind} text: not UTF-8 ({exc.reason})") from exc
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV: {exc}") from exc


def _json_document(path: Path, records: str) -> Iterator[dict]:
    if path.stat().st_size > MAX_JSON_BYTES:
        raise InputError(
            f"{path}: a JSON document over {MAX_JSON_BYTES >> 20} MB; write it as JSON lines"
        )
    with _text(path) as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not JSON ({exc})") from exc
    if records:
        data = get_path(data, records)
        if data is MISSING:
            raise InputError(f"{path}: no {records!r} in the JSON document")
    data = split_rows(data, path)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of objects (or records: its path)")
    for number, value in enumerate(data):
        if not isinstance(value, dict):
            raise InputError(f"{path}: record {number} is not a JSON object")
        yield value


def split_rows(data: object, path: Path) -> object:
    """A table in pandas' split layout (``to_json(orient="split")``: ``{columns,
    data[, index]}``, as mlflow.log_table writes it) as its list of row records;
    anything else as given: a ``{columns, data}`` object whose rows are not all
    lists (an API's column schema and its records) is no split table."""
    if not isinstance(data, dict) or set(data) not in SPLIT_KEYS:
        return data
    columns, rows = data["columns"], data["data"]
    if not isinstance(columns, list) or not isinstance(rows, list):
        return data
    if not all(isinstance(row, list) for row in rows):
        return data
    for number, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise InputError(
                f"{path}: row {number} of the split table does not have its {len(columns)} columns"
            )
    return [dict(zip(map(str, columns), row, strict=True)) for row in rows]


def _parquet(path: Path) -> Iterator[dict]:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow's errors name neither the file nor the format
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from exc
    for batch in table.iter_batches(batch_size=10_000):
        yield from batch.to_pylist()


def parquet_rows(path: str | Path) -> int | None:
    """The row count in a Parquet file's footer (loading.parquet_rows), None when
    it is not a readable Parquet file."""
    from judge_bias.inputs.loading import parquet_rows as footer_rows

    try:
        return footer_rows(Path(path))
    except InputError:
        return None


def get_path(value: object, path: str) -> object:
    """The value at a dotted path: a key (a key holding dots is matched whole
    first, as in a flattened CSV header), a list index (``scores.0``), or a JSON
    text met on the way parsed (a CSV cell holding JSON). MISSING when absent."""
    if path == "":
        return value
    if isinstance(value, str) and value[:1] in "[{":
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return MISSING
    if isinstance(value, dict):
        if path in value:
            return value[path]
        for i, char in enumerate(path):
            if char == "." and path[:i] in value:
                found = get_path(value[path[:i]], path[i + 1 :])
                if found is not MISSING:
                    return found
        return MISSING
    if isinstance(value, list):
        head, _, rest = path.partition(".")
        try:
            index = int(head)
        except ValueError:
            return MISSING
        if -len(value) <= index < len(value):
            return get_path(value[index], rest)
    return MISSING
