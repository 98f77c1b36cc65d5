"""In-house CSV, JSON lines, JSON or Parquet files, mapped by a YAML config (--config).

The config (docs/mapping.md; examples in examples/mapping/) lists outputs: each
names a contract kind (judge_ratings, human_annotations, pairwise_judgments, ...)
and, per column, where its value comes from: a dotted path into the record
(``gradingResult.score``, ``scores.0.value``; a CSV header holding dots is
matched whole first), a constant, or a template (``"{dataset}-{row}"``), with a
value map (``{PASS: 1, FAIL: 0}``; a number it does not name passes as it is)
and a default. ``each: scores`` writes one
row per element of a list or object (``_item`` the element, ``_key`` its key or
index; in a flat record, the columns named ``scores.<key>``); ``where`` keeps
the records whose values match. Columns outside the contract are kept as extra
columns. rating_scales and models are given in the
config (``dimension: "*"`` gives every dimension written that scale); models
not named there get a family from their name, and ``--models`` goes on top.

Nothing is dropped silently: a path that does not resolve writes an empty value
(the build rejects the row, missing_value, when the column is one it needs; an
extra column's gap is said and the row kept), a value the map does not name is
written as given (the build rejects it if it is off the scale), and the records
no output took are counted; each count is printed. Exact repeats of a prompt or
completion row (one per judge in a long file) are written once.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.contract import KINDS
from judge_bias.inputs.importers._records import MISSING, get_path, iter_records
from judge_bias.inputs.importers._write import write_models
from judge_bias.inputs.importers.mapping_config import (
    Condition,
    MappingConfig,
    MappingError,
    Output,
    Spec,
    load_config,
)
from judge_bias.inputs.writer import csv_text, write_contract_file

# Long files repeat a prompt, completion or human label on every judge's row.
DEDUPED_KINDS = ("prompts", "completions", "human_annotations")
NAME_COLUMNS = ("judge", "model", "model_first", "model_second")
SCORE_SUFFIX = "/score"  # MLflow 2's "<metric>/<version>/score" columns
TEMPLATE_FIELD = re.compile(r"\{([^{}]+)\}")


def _scalar(value: object) -> object:
    """A value as the writer takes it: objects and lists as JSON text."""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


class _Tally:
    """What the import could not map, for the lines it prints."""

    def __init__(self) -> None:
        self.missing: Counter[str] = Counter()
        self.kept: set[str] = set()  # columns the build does not need: missing is kept
        self.unmapped: Counter[str] = Counter()
        self.unmapped_examples: dict[str, set[str]] = {}
        self.no_each: Counter[str] = Counter()
        self.taken: Counter[int] = Counter()  # rows per output (by index)
        self.scores: dict[str, int] = {}  # top-level "*/score" fields -> records holding one


def _value(spec: Spec, ctx: dict, where: str, tally: _Tally) -> object:
    if spec.template is not None:
        parts = {p: get_path(ctx, p) for p in TEMPLATE_FIELD.findall(spec.template)}
        if any(v is MISSING or v is None for v in parts.values()):
            value: object = MISSING
        else:
            value = TEMPLATE_FIELD.sub(
                lambda m: csv_text(_scalar(parts[m.group(1)])), spec.template
            )
    elif spec.path is not None:
        value = next(
            (
                v
                for v in (get_path(ctx, p) for p in spec.path)
                if v is not MISSING and v is not None
            ),
            MISSING,
        )
    else:
        value = spec.const
    if value is MISSING or value is None or value == "":
        if spec.default is not None:
            return spec.default
        tally.missing[where] += 1
        return None
    if spec.map is not None:
        text = csv_text(_scalar(value))
        if text in spec.map:
            return spec.map[text]
        if _is_number(value):
            return value  # a number the map does not name: on a numeric scale as it is
        tally.unmapped[where] += 1
        tally.unmapped_examples.setdefault(where, set()).add(text)
    return _scalar(value)


def _is_number(value: object) -> bool:
    # a string of a number counts (a CSV cell is text), NaN and inf too: not
    # stats.scalars.is_finite_number's question
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    try:
        float(str(value))
    except ValueError:
        return False
    return True


def _passes(ctx: dict, conditions: Sequence[Condition]) -> bool:
    for c in conditions:
        value = get_path(ctx, c.path)
        present = value is not MISSING and value is not None
        if c.op == "exists":
            if present != c.exists:
                return False
            continue
        text = csv_text(_scalar(value)) if present else ""
        if c.op in ("eq", "in") and text not in c.values:
            return False
        if c.op == "not_in" and text in c.values:
            return False
    return True


def _is_element_test(c: Condition) -> bool:
    return c.path.split(".")[0] in ("_key", "_item")


def _contexts(record: dict, output: Output, tally: _Tally, where: str) -> Iterator[dict]:
    """The record (or, with each, one context per element) for the output: the
    record's own where tests come first, so a record they exclude is not counted
    as lacking the each field."""
    if not _passes(record, [c for c in output.where if not _is_element_test(c)]):
        return
    if output.each is None:
        yield record
        return
    items = get_path(record, output.each)
    if items is MISSING:  # a flattened header (pandas' to_csv of a LangSmith experiment:
        # feedback.correctness, feedback.helpfulness): the columns under the prefix
        prefix = f"{output.each}."
        flat = {k[len(prefix) :]: v for k, v in record.items() if str(k).startswith(prefix)}
        items = flat or MISSING
    if isinstance(items, dict):
        pairs: list[tuple[object, object]] = list(items.items())
    elif isinstance(items, list):
        pairs = list(enumerate(items))
    else:
        tally.no_each[where] += 1
        return
    for key, item in pairs:
        yield {**record, "_key": key, "_item": item}


def map_records(
    config: MappingConfig, files: Sequence[str | Path]
) -> tuple[dict[str, list[dict[str, object]]], int, int, _Tally]:
    """The rows of every output kind; the records read and how many no output took."""
    rows: dict[str, list[dict[str, object]]] = {}
    tally = _Tally()
    n_read = n_untaken = 0
    for i, output in enumerate(config.outputs):
        kind = KINDS[output.kind]
        needed = {*kind.required, *(c for group in kind.one_of for c in group)}
        tally.kept.update(f"outputs[{i}].columns.{c}" for c in output.columns if c not in needed)
    for path in map(Path, files):
        if path.is_dir():
            raise InputError(f"{path}: a directory; give the files themselves")
        for record in iter_records(path, config.format, config.records):
            n_read += 1
            for key in record:
                if isinstance(key, str) and key.endswith(SCORE_SUFFIX):
                    tally.scores[key] = tally.scores.get(key, 0) + 1
            taken = False
            for i, output in enumerate(config.outputs):
                where = f"outputs[{i}]"
                for ctx in _contexts(record, output, tally, where):
                    if not _passes(ctx, [c for c in output.where if _is_element_test(c)]):
                        continue
                    taken = True
                    tally.taken[i] += 1
                    row = {
                        col: _value(spec, ctx, f"{where}.columns.{col}", tally)
                        for col, spec in output.columns.items()
                    }
                    rows.setdefault(output.kind, []).append(row)
            n_untaken += not taken
    return rows, n_read, n_untaken, tally


def _dedupe(rows: list[dict[str, object]]) -> tuple[list[dict[str, object]], int]:
    seen: dict[tuple, dict[str, object]] = {}
    for row in rows:
        seen.setdefault(tuple(sorted((k, csv_text(v)) for k, v in row.items())), row)
    return list(seen.values()), len(rows) - len(seen)


def scale_rows(config: MappingConfig, rows: dict[str, list[dict]]) -> list[dict[str, object]]:
    """The config's scales, and its ``dimension: "*"`` scale for every other
    dimension the ratings and annotations carry."""
    scales = list(config.scales)
    named = {csv_text(r["dimension"]) for r in scales}
    dims = dict.fromkeys(
        csv_text(r.get("dimension"))
        for kind in ("judge_ratings", "human_annotations")
        for r in rows.get(kind, [])
    )
    for dim in dims:
        if dim and dim not in named:
            scales += [{**r, "dimension": dim} for r in config.scale_all]
    return scales


def _say(line: str) -> None:
    print(f"mapping: {line}", file=sys.stderr)


def _report(n_read: int, n_untaken: int, tally: _Tally) -> None:
    if n_untaken:
        _say(f"{n_untaken:,} of {n_read:,} records matched no output's where: not imported")
    for where, n in sorted(tally.no_each.items()):
        _say(f"{where}.each: {n:,} records have no list or object there: no rows from them")
    for where, n in sorted(tally.missing.items()):
        fate = "keeps" if where in tally.kept else "rejects"  # an extra column's gap is harmless
        _say(f"{where}: {n:,} values missing, written empty (the build {fate} those rows)")
    for where, n in sorted(tally.unmapped.items()):
        shown = ", ".join(sorted(tally.unmapped_examples[where])[:5])
        _say(f"{where}.map: {n:,} values it does not name, written as given ({shown})")


def _report_text_labels(rows: dict[str, list[dict]], scales: list[dict[str, object]]) -> None:
    """One line per dimension whose labels include text on none of its scale's
    labels (LangSmith's categorical feedback: ``value: "pass"`` and no score): the
    build rejects those rows; the line names the config entry that would take them."""
    on_scale: dict[str, set[str]] = {}
    for r in scales:
        on_scale.setdefault(csv_text(r["dimension"]), set()).add(csv_text(r["label"]))
    off: dict[str, Counter[str]] = {}
    for kind in ("judge_ratings", "human_annotations"):
        for r in rows.get(kind, []):
            label, dim = r.get("label"), csv_text(r.get("dimension"))
            text = csv_text(label)
            if text and not _is_number(label) and text not in on_scale.get(dim, set()):
                off.setdefault(dim, Counter())[text] += 1
    for dim, texts in sorted(off.items()):
        # JSON-quoted, so the entry pasted into YAML keeps yes/no/true and commas text
        shown = ", ".join(f"{json.dumps(t)}: <score>" for t in sorted(texts)[:5])
        _say(f"dimension {dim!r}: {sum(texts.values()):,} text labels on no scale of it "
             f"({', '.join(sorted(texts)[:5])}): the build rejects those rows; name each "
             f"in the label's map, or give the dimension a labels scale: rating_scales: "
             f"- {{dimension: {json.dumps(dim)}, labels: {{{shown}}}}}")  # fmt: skip


def _read_fields(config: MappingConfig) -> set[str]:
    """The record fields a config reads: its column paths and templates' fields."""
    fields: set[str] = set()
    for output in config.outputs:
        for spec in output.columns.values():
            fields.update(spec.path or [])
            fields.update(TEMPLATE_FIELD.findall(spec.template or ""))
    return fields


def _report_config(config: MappingConfig, tally: _Tally) -> None:
    """One line naming the judge and model a config gives as constants (not read
    from the file: a ready config's guess), one naming the ``*/score`` fields of
    the file it does not map."""
    consts: dict[str, dict[str, None]] = {"judge": {}, "model": {}}
    for i, output in enumerate(config.outputs):
        for col, names in consts.items():
            spec = output.columns.get(col)
            if tally.taken[i] and spec is not None and spec.const is not None:
                names[csv_text(spec.const)] = None
    parts = [f"{col} {', '.join(repr(n) for n in names)}" for col, names in consts.items() if names]
    if parts:
        many = sum(map(len, consts.values())) > 1
        verb = "are constants" if many else "is a constant"
        _say(f"{' and '.join(parts)} {verb} of the config, not read from the file: "
             "edit a copy of it")  # fmt: skip
    unread = sorted(set(tally.scores) - _read_fields(config))
    if unread:
        _say(f"{len(unread)} score column(s) of the file no output maps, not imported: "
             f"{', '.join(unread)} (a judge's? map it in a copy of the config)")  # fmt: skip


def import_mapping(
    files: Sequence[str | Path],
    out_dir: str | Path,
    models: str | Path | None = None,
    config: str | Path | None = None,
) -> dict[str, int]:
    """Map in-house files to the input contract in ``out_dir`` by the YAML ``config``.

    Returns the number of rows written per output file."""
    if config is None:
        raise MappingError("import mapping needs --config FILE (docs/mapping.md)")
    cfg = load_config(config)
    rows, n_read, n_untaken, tally = map_records(cfg, files)
    if n_read == 0:
        raise InputError(f"{', '.join(map(str, files))}: no records to map")
    _report(n_read, n_untaken, tally)
    _report_config(cfg, tally)
    out = Path(out_dir)
    written: dict[str, int] = {}
    for kind, kind_rows in rows.items():
        if kind in DEDUPED_KINDS:
            kind_rows, repeats = _dedupe(kind_rows)
            if repeats:
                _say(f"{kind}: {repeats:,} exact repeats written once")
        columns = dict.fromkeys(c for r in kind_rows for c in r)
        extra = [c for c in columns if c not in KINDS[kind].columns]
        written[kind] = write_contract_file(out, kind, kind_rows, extra)
    if "judge_ratings" not in written:
        raise MappingError(
            f"{cfg.path}: no judge_ratings row written from {n_read:,} records "
            "(judge_ratings is the one required file; check outputs and where)"
        )
    scales = scale_rows(cfg, rows)
    _report_text_labels(rows, scales)
    if scales:
        extra = [c for c in ("is_na", "scale_level") if any(c in r for r in scales)]
        written["rating_scales"] = write_contract_file(out, "rating_scales", scales, extra)
    names = [
        csv_text(r.get(c))
        for kind_rows in rows.values()
        for r in kind_rows
        for c in NAME_COLUMNS
        if c in r
    ]
    defaults = {m["alias"]: (m["model"], m["family"]) for m in cfg.models}
    written["models"] = write_models(out, [*defaults, *names], defaults, models)
    return written
