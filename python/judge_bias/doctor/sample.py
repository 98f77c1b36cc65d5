"""Read a sample of any file in bounded memory (settings.SAMPLE_RECORDS records),
and count its records: CSV and JSON lines streamed to the end, Parquet from its
footer, a JSON document parsed whole (up to settings.MAX_JSON_DOCUMENT_BYTES).

A JSON document whose records sit deeper (``{"instances": [...]}``,
``{"results": {"results": [...]}}``) is read at its largest list of objects,
and the path is said. A file that is empty, binary or not text is a one-line error.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from judge_bias.doctor import settings
from judge_bias.errors import InputError
from judge_bias.inputs.encoding import describe_bytes
from judge_bias.inputs.importers._records import file_kind, iter_records, parquet_rows, split_rows


@dataclass
class Sample:
    """The first records of a file, and how many it holds."""

    path: Path
    kind: str  # csv, tsv, jsonl, json, parquet, inspect-eval
    records: list[dict]
    n_records: int
    records_path: str = ""  # where a JSON document keeps its records
    top_keys: tuple[str, ...] = ()  # a JSON document's top-level keys
    zip_names: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return len(self.records) == self.n_records


def _largest_list(value: object, path: str = "", depth: int = 0) -> tuple[str, int]:
    """The dotted path of the largest list of objects in a JSON value."""
    best = ("", -1)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value[:50]):
        best = (path, len(value))
    if isinstance(value, dict) and depth < 3:
        for key, item in value.items():
            found = _largest_list(item, f"{path}.{key}" if path else str(key), depth + 1)
            if found[1] > best[1]:
                best = found
    return best


def read_sample(path: str | Path, limit: int | None = None) -> Sample:
    """The file's first ``limit`` records (settings.SAMPLE_RECORDS) and its record count."""
    limit = settings.SAMPLE_RECORDS if limit is None else limit
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"{path}: an empty file (0 bytes): nothing to profile")
    with path.open("rb") as fh:
        head = fh.read(4096)
    if head.startswith(b"PK\x03\x04"):
        return _zip_sample(path)
    kind = file_kind(path)
    what = describe_bytes(head)
    if kind != "parquet" and what and not path.name.lower().endswith(".gz"):
        raise InputError(f"{path}: not a CSV, JSON, JSON lines or Parquet file: it is {what}")
    if kind == "json":
        return _json_sample(path, size, limit)
    records: list[dict] = []
    n = 0
    for record in iter_records(path, kind, long_rows="keep"):
        if n < limit:
            records.append(record)
        n += 1
        if kind == "parquet" and n >= limit:
            n = parquet_rows(path) or n
            break
    return Sample(path, kind, records, n)


def _json_sample(path: Path, size: int, limit: int) -> Sample:
    if size > settings.MAX_JSON_DOCUMENT_BYTES:
        raise InputError(
            f"{path}: a JSON document of {size >> 20} MB, above the doctor's "
            f"{settings.MAX_JSON_DOCUMENT_BYTES >> 20} MB: give it as JSON lines"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not JSON text: not UTF-8 ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc})") from exc
    top = tuple(map(str, data)) if isinstance(data, dict) else ()
    data = split_rows(data, path)  # pandas' split layout: its rows, as the importers read it
    where, n = _largest_list(data)
    if n < 0:
        records = [data] if isinstance(data, dict) else []
        if not isinstance(data, dict | list):
            raise InputError(f"{path}: a JSON {type(data).__name__}, not records")
        return Sample(path, "json", records, len(records), "", top)
    value: object = data
    for part in where.split(".") if where else []:
        value = value[part]  # type: ignore[index]
    assert isinstance(value, list)
    return Sample(path, "json", value[:limit], len(value), where, top)


def _zip_sample(path: Path) -> Sample:
    try:
        with zipfile.ZipFile(path) as archive:
            names = tuple(archive.namelist())
    except zipfile.BadZipFile as exc:
        raise InputError(f"{path}: a damaged zip archive ({exc})") from exc
    return Sample(path, "zip", [], 0, zip_names=names)
