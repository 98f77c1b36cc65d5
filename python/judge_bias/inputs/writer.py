"""The one writer of input files: every CSV the importers, the simulator and the
benchmarks write goes through ``write_rows`` (or ``write_contract_file`` for rows
as mappings), so the headers come from ``judge_bias.inputs.contract.KINDS``.

A file named after an input kind (``prompts.csv``, ``judge_ratings.csv``, ...) may
only carry that kind's contract columns, plus the ``extra`` columns its writer
declares (kept by the warehouse in ``base_inputs__<kind>`` and in
``rejected_rows.raw_values``); any other file (``truth.csv``) is written as given.
Values are written as given: None as an empty field, booleans as ``true``/``false``,
everything else as ``str()``; RFC 4180 quoting, UTF-8, LF line ends.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.contract import KINDS


def csv_text(value: object) -> str:
    """A value as CSV text: None as empty, booleans lower case, others as str()."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def kind_of(path: str | Path) -> str | None:
    """The input kind a file name stands for (``judge_ratings.csv.gz`` -> judge_ratings)."""
    stem = Path(path).name.split(".")[0]
    return stem if stem in KINDS else None


def check_columns(path: str | Path, columns: Sequence[str], extra: Sequence[str] = ()) -> None:
    """Raise ValueError when a contract file would carry a column its kind does not
    declare and its writer did not declare as extra."""
    kind = kind_of(path)
    if kind is None:
        return
    unknown = [c for c in columns if c not in KINDS[kind].columns and c not in extra]
    if unknown:
        raise InputError(
            f"{Path(path).name}: columns {unknown} are not in the {kind} contract "
            f"({', '.join(KINDS[kind].columns)}) nor declared extra"
        )


def write_rows(
    path: str | Path,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    extra: Sequence[str] = (),
) -> int:
    """Write ``columns`` and then ``rows`` to ``path`` (its folder is created); returns
    the number of rows written."""
    check_columns(path, columns, extra)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([csv_text(v) for v in row])
            n += 1
    return n


def write_contract_file(
    out_dir: str | Path,
    kind: str,
    rows: Iterable[Mapping[str, object]],
    extra_columns: Sequence[str] = (),
) -> int:
    """Write ``<out_dir>/<kind>.csv`` with every contract column of ``kind`` and
    ``extra_columns``; a column a row does not carry is empty. Returns the number of
    rows written."""
    columns = [*KINDS[kind].columns, *(c for c in extra_columns if c not in KINDS[kind].columns)]
    if kind == "models":
        # a models file is small; its optional columns (previous_version) are written
        # only when a row carries one, so the file stays the three columns the README
        # shows and rows a user appends to it keep the header's field count
        rows = list(rows)
        carried = {c for row in rows for c, v in row.items() if v not in (None, "")}
        columns = [c for c in columns if c not in KINDS[kind].optional or c in carried]

    def values(rows: Iterable[Mapping[str, object]]) -> Iterable[list[object]]:
        for row in rows:
            unknown = set(row) - set(columns)
            if unknown:
                raise InputError(f"{kind}: columns {sorted(unknown)} are not declared")
            yield [row.get(c) for c in columns]

    return write_rows(Path(out_dir) / f"{kind}.csv", columns, values(rows), extra_columns)
