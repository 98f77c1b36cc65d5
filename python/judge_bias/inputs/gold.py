"""Human labels kept in a separate spreadsheet, joined by id after any import
(``judge-bias import FORMAT FILE... --out DIR --gold LABELS --gold-id COLUMN``).

It works on what the importer wrote, so every importer gets it: the gold file's
``COLUMN`` (``--gold-id GOLD=RATINGS`` when the two names differ) is matched,
as text, against the column of the same name in ``DIR/judge_ratings.csv``: the
contract's ``prompt_id`` or an extra column the importer keeps (``trace_id``,
``sample_id``, ``run_id`` ...). A gold row gives one human label to the
completion (prompt_id, model) and dimension the matching ratings are about;
when the gold file has ``model`` or ``dimension`` columns, they narrow the match.
An id that names ratings of several completions or dimensions, with no column
to tell them apart, is refused: a human label is about one completion on one
dimension. The label is the gold file's ``label`` column (``--gold-label``),
the annotator its ``annotator_id`` column, else ``gold``.

The labels are appended to ``DIR/human_annotations.csv`` (kept: the rows the
importer wrote there) with the gold id as the extra column ``gold_id``. One line
reports the rows read, joined and matching nothing; an id repeated with two
different labels (numbers compared as numbers) or no id matching at all is a
one-line error.
"""

from __future__ import annotations

import contextlib
import csv
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.contract import KINDS
from judge_bias.inputs.importers._records import iter_records
from judge_bias.inputs.writer import csv_text, write_contract_file

DEFAULT_ANNOTATOR = "gold"
# (prompt_id, model, dimension, annotator) -> (label, gold row number, gold id)
Labels = dict[tuple[str, str, str, str], tuple[str, int, str]]
GOLD_ID_COLUMN = "gold_id"


@dataclass
class GoldSummary:
    """What a gold join did: gold rows read, joined, repeated, matching nothing."""

    path: Path
    n_rows: int
    n_joined: int  # gold rows that gave a label
    n_annotations: int  # human_annotations rows written from them
    n_ratings: int  # judge ratings that now have a gold label
    n_unmatched: int
    n_repeats: int  # the same id and label again, written once
    n_no_id: int
    n_off_scale: int
    unmatched_examples: list[str]

    def line(self) -> str:
        parts = [
            f"gold {self.path.name}: {self.n_rows:,} rows read",
            f"{self.n_joined:,} joined ({self.n_annotations:,} human labels for "
            f"{self.n_ratings:,} judge ratings)",
            f"{self.n_unmatched:,} matched no judge rating"
            + (f" (e.g. {', '.join(self.unmatched_examples)})" if self.n_unmatched else ""),
        ]
        if self.n_repeats:
            parts.append(f"{self.n_repeats:,} repeats of the same label written once")
        if self.n_no_id:
            parts.append(f"{self.n_no_id:,} without an id, not joined")
        if self.n_off_scale:
            parts.append(
                f"{self.n_off_scale:,} labels not on the dimension's rating_scales "
                "(the build rejects them)"
            )
        return "; ".join(parts)


def _same(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _on_scale(out: Path) -> dict[str, tuple[set[str], tuple[float, float] | None]]:
    """Per dimension: its labels and the range of its numeric labels."""
    path = out / "rating_scales.csv"
    if not path.is_file():
        return {}
    labels: dict[str, set[str]] = defaultdict(set)
    numbers: dict[str, list[float]] = defaultdict(list)
    for r in _read_csv(path)[1]:
        labels[r["dimension"]].add(r["label"])
        with contextlib.suppress(ValueError):
            numbers[r["dimension"]].append(float(r["label"]))
    return {
        d: (labs, (min(numbers[d]), max(numbers[d])) if numbers[d] else None)
        for d, labs in labels.items()
    }


def _is_on_scale(label: str, scale: tuple[set[str], tuple[float, float] | None] | None) -> bool:
    if scale is None:
        return True  # no scale for the dimension: the build says so itself
    labels, ends = scale
    if label in labels:
        return True
    try:
        value = float(label)
    except ValueError:
        return False
    return ends is not None and ends[0] <= value <= ends[1]


def join_gold(
    out_dir: str | Path, gold: str | Path, gold_id: str, label: str = "label"
) -> GoldSummary:
    """Join the gold file's labels to the judge ratings in ``out_dir`` (see the module)."""
    out, gold = Path(out_dir), Path(gold)
    gold_col, _, ratings_col = gold_id.partition("=")
    ratings_col = ratings_col or gold_col
    ratings_path = out / "judge_ratings.csv"
    if not ratings_path.is_file():
        raise InputError(f"--gold: the import wrote no judge_ratings.csv in {out} to join to")
    header, ratings = _read_csv(ratings_path)
    if ratings_col not in header:
        raise InputError(
            f"--gold-id {gold_id}: judge_ratings.csv has no column {ratings_col!r} "
            f"(its columns: {', '.join(header)})"
        )
    targets: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    per_key: Counter[tuple[str, str, str]] = Counter()
    for r in ratings:
        key3 = (r["prompt_id"], r["model"], r["dimension"])
        per_key[key3] += 1
        if r[ratings_col]:
            targets[r[ratings_col]].add(key3)

    labels: Labels = {}
    n_rows = n_repeats = n_no_id = n_unmatched = 0
    unmatched: list[str] = []
    have: set[str] = set()
    for number, record in enumerate(iter_records(gold), 2):
        if number == 2:
            have = set(record)
            missing = [c for c in (gold_col, label) if c not in have]
            if missing:
                raise InputError(
                    f"{gold}: no column {' or '.join(map(repr, missing))} "
                    f"(its columns: {', '.join(map(str, record))}); "
                    "give --gold-id COLUMN and --gold-label COLUMN"
                )
        n_rows += 1
        gid, value = csv_text(record.get(gold_col)).strip(), csv_text(record.get(label)).strip()
        if not gid:
            n_no_id += 1
            continue
        matches = targets.get(gid, set())
        model = csv_text(record.get("model")).strip() if "model" in have else ""
        dimension = csv_text(record.get("dimension")).strip() if "dimension" in have else ""
        found = {k for k in matches if (not model or k[1] == model)}
        found = {k for k in found if (not dimension or k[2] == dimension)}
        if not found:
            n_unmatched += 1
            if len(unmatched) < 3:
                unmatched.append(gid)
            continue
        for what, index, column in (
            ("completions", (0, 1), "model"),
            ("dimensions", (2,), "dimension"),
        ):
            distinct = {tuple(k[i] for i in index) for k in found}
            if len(distinct) > 1:
                raise InputError(
                    f"{gold}: id {gid!r} (row {number}) names judge ratings of {len(distinct)} "
                    f"{what}; add a {column} column to the gold file or join on an id that "
                    "names one"
                )
        annotator = csv_text(record.get("annotator_id")).strip() or DEFAULT_ANNOTATOR
        (prompt_id, mod, dim) = next(iter(found))
        key = (prompt_id, mod, dim, annotator)
        if key in labels:
            previous, row, _ = labels[key]
            if not _same(previous, value):
                raise InputError(
                    f"{gold}: id {gid!r} has two different labels, {previous!r} (row {row}) "
                    f"and {value!r} (row {number})"
                )
            n_repeats += 1
            continue
        labels[key] = (value, number, gid)
    if not labels:
        example = next(iter(targets), "none")
        raise InputError(
            f"{gold}: no id in column {gold_col!r} matches judge_ratings.{ratings_col} "
            f"({n_rows:,} gold rows; gold ids e.g. {', '.join(unmatched) or 'none'}; "
            f"rating ids e.g. {example})"
        )
    scales = _on_scale(out)
    off_scale = sum(not _is_on_scale(v, scales.get(k[2])) for k, (v, _, _) in labels.items())
    n_written = _append_annotations(out, labels)
    return GoldSummary(
        path=gold,
        n_rows=n_rows,
        n_joined=n_rows - n_unmatched - n_no_id,
        n_annotations=n_written,
        n_ratings=sum(per_key[k[:3]] for k in dict.fromkeys(k[:3] for k in labels)),
        n_unmatched=n_unmatched,
        n_repeats=n_repeats,
        n_no_id=n_no_id,
        n_off_scale=off_scale,
        unmatched_examples=unmatched,
    )


def _append_annotations(out: Path, labels: Labels) -> int:
    """Write the gold labels after the rows the importer wrote to human_annotations.csv."""
    path = out / "human_annotations.csv"
    header, existing = _read_csv(path) if path.is_file() else ([], [])
    rows: list[dict[str, object]] = [dict(r) for r in existing]
    for (prompt_id, model, dimension, annotator), (value, _, gid) in labels.items():
        rows.append(
            {
                "prompt_id": prompt_id,
                "model": model,
                "dimension": dimension,
                "annotator_id": annotator,
                "label": value,
                GOLD_ID_COLUMN: gid,
            }
        )
    contract = KINDS["human_annotations"].columns
    extra = [c for c in dict.fromkeys([*header, GOLD_ID_COLUMN]) if c not in contract]
    write_contract_file(out, "human_annotations", rows, extra)
    return len(labels)
