"""Langfuse scores (the /scores API pages, the UI's CSV/JSON export) with their traces.

Record schema: Langfuse's own source (langfuse/langfuse): a score is the domain
``ScoreSchema`` of ``packages/shared/src/domain/scores.ts`` (commit 06388ae:
id, name, source ``EVAL``/``ANNOTATION``/``API``, dataType
``NUMERIC``/``CATEGORICAL``/``BOOLEAN`` with ``value``/``stringValue``,
comment, authorUserId, executionTraceId, traceId, observationId, sessionId,
datasetRunId, ...); ``GET /api/public/v2/scores`` pages it as ``{data, meta}``
(``fern/apis/server/definition/score-v2.yml``). The UI's scores export
(``worker/src/features/database-read-stream/getDatabaseReadStream.ts``) has
id, traceId, source, name, dataType, value, stringValue, comment,
observationId, authorUserName, ... as CSV, JSON or JSONL. Traces and
observations are ``GET /api/public/traces`` and ``/observations`` pages (or one
``/traces/{id}`` with its observations and scores), ``commons.yml``, or the UI's
observations and traces table exports (JSON, or CSV with non-string values
JSON-encoded). Scores of
other API versions are read in the v2 layout (``_as_v2``): v3 pages
(``GET /api/public/v3/scores``: ``subject`` and a typed ``value``; no
``executionTraceId``) and v1 pages from before score data types.

Give the score files and, to name the models, the traces/observations files;
each file is recognised by its records.

- **EVAL** scores (Langfuse's LLM-as-a-judge) -> judge_ratings: judge = the
  model of the GENERATION in the evaluator's execution trace
  (``executionTraceId``; worker ``evalScoreEvent.ts``), else ``--judge
  NAME=MODEL`` for the score's name, else ``evaluator:<name>`` (counted).
  **API** scores (SDK/external pipelines) are judge ratings only when their
  name is given with ``--judge``; otherwise skipped and counted.
  **ANNOTATION** scores -> human_annotations, annotator_id = authorUserId (the
  UI export's authorUserName), else ``unknown-annotator`` (counted).
- dimension = the score name; label: NUMERIC the value, BOOLEAN its
  stringValue (True/False), CATEGORICAL its stringValue. Other data types
  (CORRECTION, TEXT) are skipped and counted. rationale = the comment.
- **model** = the model of the scored observation (``observationId``), else the
  one model of the trace's GENERATIONs (the last one by start time when there
  are several, counted), else ``unknown`` (counted: give the traces and
  observations files).
- prompt_id = the traceId (``<traceId>:<observationId>`` for an observation's
  score; ``session:<sessionId>`` for a session's). A dataset-run score
  (no trace, no session) grades a whole run, not an output: skipped, counted.
  A score id seen twice (overlapping pages or exports) is written once.
- **rating_scales** per name: NUMERIC from the smallest to the largest value
  seen (0 and 1 added when they are equal); BOOLEAN True 1 / False 0;
  CATEGORICAL the category's value when a score config gives one (level
  ordinal), else 0, 1, ... in label order (level nominal).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._records import long_row_causes
from judge_bias.inputs.importers._write import parse_json, parse_judges, read_text, write_models
from judge_bias.inputs.writer import csv_text, write_contract_file
from judge_bias.stats.scalars import is_finite_number

WHAT = "a Langfuse export (scores, traces or observations: API JSON pages, UI CSV/JSON/JSONL)"
JUDGE_SOURCES = ("EVAL", "API")
LABEL_TYPES = ("NUMERIC", "BOOLEAN", "CATEGORICAL")
RATING_EXTRAS = ("rationale", "score_id", "source", "data_type")
HUMAN_EXTRAS = ("rationale", "score_id")
SCALE_EXTRAS = ("scale_level",)
BOOLEAN_LABELS: dict[float, object] = {1.0: "True", 0.0: "False"}
# a v2 score always has these keys (null when unset); a v3 score has none of them
V2_ONLY = ("traceId", "sessionId", "datasetRunId", "observationId", "stringValue")
# the UI's table exports read to name models and prompts (getDatabaseReadStream.ts)
# JSON.stringify of a Date (its toISOString), as the table CSV writer encodes dates
JSON_DATE = re.compile(r'"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z"')
TABLE_EXPORTS = {
    "observations": {"id", "traceId", "type", "startTime"},
    "traces": {"id", "timestamp", "name", "observationCount"},
}
LONG_ROW = "_long_csv_row"  # a scores CSV row longer than its header, written through
V3_SUBJECTS = {
    "trace": "traceId", "observation": "observationId", "session": "sessionId",
    "experiment": "datasetRunId",
}  # fmt: skip


def _kind(record: object) -> str | None:
    if not isinstance(record, dict):
        return None
    if LONG_ROW in record:
        return LONG_ROW
    # a categorical score without a config has no value: JSON leaves it out
    if {"name", "source", "dataType"} <= set(record) and (
        "value" in record or "stringValue" in record
    ):
        return "score"
    if {"type", "startTime", "traceId"} <= set(record):
        return "observation"
    if {"id", "timestamp"} <= set(record) and (
        # API traces (htmlPath; with details, observations), the UI's traces export
        "htmlPath" in record or "observations" in record or "observationCount" in record
    ):
        return "trace"
    return None


def _as_v2(record: object, path: Path) -> object:
    """A score of another API version in the v2 layout; any other record as given.

    - v3 (``GET /api/public/v3/scores``): the subject (``subject.kind`` trace,
      observation, session or experiment, with its id) as traceId, observationId,
      sessionId or datasetRunId; the typed value as v2's value and stringValue
      (a boolean True/False and 1/0, a category or text as stringValue). A v3
      score without its subject (fetched without ``fields=subject``) names no
      output: a one-line error.
    - v1 before score data types (Langfuse 2.x before June 2024): no dataType,
      which Langfuse's migration made NUMERIC; source REVIEW, renamed ANNOTATION.
    """
    if not isinstance(record, dict) or not {"name", "source", "value"} <= set(record):
        return record
    if "dataType" not in record and "traceId" in record:
        record = {**record, "dataType": "NUMERIC"}
    if record.get("source") == "REVIEW":
        record = {**record, "source": "ANNOTATION"}
    if "dataType" not in record or any(k in record for k in V2_ONLY):
        return record
    subject = record.get("subject")
    if not isinstance(subject, dict) or subject.get("kind") not in V3_SUBJECTS:
        raise InputError(
            f"{path}: Langfuse v3 scores without their subject (trace or observation): "
            "fetch /api/public/v3/scores with fields=subject,annotation,details"
        )
    v2 = {**record, V3_SUBJECTS[subject["kind"]]: subject.get("id")}
    if subject["kind"] == "observation":
        v2["traceId"] = subject.get("traceId")
    value = record.get("value")
    if record["dataType"] == "BOOLEAN" and isinstance(value, bool):
        v2.update(value=float(value), stringValue=str(value))
    elif record["dataType"] != "NUMERIC":
        v2.update(value=None, stringValue=value)
    return v2


def _records(path: Path) -> list[object]:
    return [_as_v2(r, path) for r in _records_as_given(path)]


def _records_as_given(path: Path) -> list[object]:
    text = read_text(path, WHAT)
    if path.suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        fields = set(reader.fieldnames or [])
        width = len(reader.fieldnames or [])
        if {"id", "source", "name", "dataType", "value"} <= fields:
            rows, long_rows = _whole_rows(reader, path)
            _say_long_rows(path, (len(rows), width), long_rows, "written through to "
                           "judge_ratings.csv with an empty label, for the build to reject "
                           "(rejected_rows: missing_value, the row's cells in its "
                           "rationale)")  # fmt: skip
            header = list(reader.fieldnames or [])
            return [*map(_from_csv, rows), *(_long_score(path, header, *r) for r in long_rows)]
        if any(columns <= fields for columns in TABLE_EXPORTS.values()):
            rows, long_rows = _whole_rows(reader, path)
            _say_long_rows(path, (len(rows), width), long_rows, "not read: a score on one of them "
                           "finds no model ('unknown', counted) nor its trace's prompt and "
                           "completion text")  # fmt: skip
            return [_from_table_csv(r) for r in rows]
        raise InputError(
            f"{path}: not {WHAT}: the CSV has the columns of none of the UI's scores "
            "(id, source, name, dataType, value), observations (id, traceId, type, "
            "startTime) or traces (id, timestamp, name, observationCount) exports"
        )
    if path.suffix == ".jsonl":
        return [parse_json(line, path, WHAT) for line in text.splitlines() if line.strip()]
    data = parse_json(text, path, WHAT)
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        return list(data["data"])
    if isinstance(data, dict) and _kind(data) == "trace":  # one trace with its details
        nested = [*(data.get("observations") or []), *(data.get("scores") or [])]
        return [data, *[n for n in nested if isinstance(n, dict)]]
    if isinstance(data, list):
        return data
    raise InputError(f"{path}: not {WHAT}: neither {{data, meta}} nor a list of records")


LongRow = tuple[int, list[str]]  # (the file's line, the row's cells)


def _whole_rows(reader: csv.DictReader, path: Path) -> tuple[list[dict[str, str]], list[LongRow]]:
    """The CSV rows of as many cells as the header, and the longer rows (csv keys
    their rest by None) with their lines and cells. A longer row's values cannot
    be trusted: a cell split in two shifts every later cell. Langfuse's UI export
    quotes per RFC 4180, but a quote escaped with a backslash (``\\"``, as a
    JSON-encoded text writes it; langfuse/langfuse#2937 reports such broken
    escaping in a CSV export) splits a text holding a comma, and a trailing comma
    at each line's end makes every row one cell longer. When most rows (more than
    half) are longer, the file is refused in one line (a one-line InputError):
    reading the rest would import a fragment. A shorter row (csv fills it with
    None), which no Langfuse writer gives, is a one-line error naming its line (a
    cut or hand-edited export)."""
    width = len(reader.fieldnames or [])
    rows: list[dict[str, str]] = []
    long_rows: list[LongRow] = []
    for row in reader:
        extra = row.pop(None, None)
        if extra is not None:
            long_rows.append((reader.line_num, [*row.values(), *extra]))
            continue
        if None in row.values():
            given = sum(v is not None for v in row.values())
            raise InputError(
                f"{path}: line {reader.line_num}: {given} cell(s) under a header of "
                f"{width} columns (a cut or hand-edited export?)"
            )
        rows.append(row)
    if long_rows and len(long_rows) * 2 > len(rows) + len(long_rows):
        line, cells = long_rows[0]
        raise InputError(
            f"{path}: line {line}: {len(cells)} cells under a header of {width} columns, "
            f"as {len(long_rows)} of {len(rows) + len(long_rows)} rows: not read; "
            f"{_likely(long_rows, width)} (fix the file, or export the scores as JSON)"
        )
    return rows, long_rows


def _likely(long_rows: list[LongRow], width: int) -> str:
    """The likely causes of the long rows, a trailing comma first when every cell
    past the header's ``width`` is empty."""
    return long_row_causes(all(c == "" for _, cells in long_rows for c in cells[width:]))


def _say_long_rows(
    path: Path, counts: tuple[int, int], long_rows: list[LongRow], fate: str
) -> None:
    """One stderr line for the few rows longer than the header (``counts``: the
    whole rows and the header's width), and the counts; the likely causes as the
    refusal orders them (a trailing comma first when every extra cell is empty)."""
    if not long_rows:
        return
    whole, width = counts
    lines = ", ".join(f"{line} ({len(cells)} cells)" for line, cells in long_rows[:10])
    print(f"langfuse: {path}: {whole + len(long_rows)} row(s) read, {whole} whole, "
          f"{len(long_rows)} of more cells than the header (line {lines}), {fate}; "
          f"{_likely(long_rows, width)}: export the file as JSON", file=sys.stderr)  # fmt: skip


def _long_score(path: Path, header: list[str], line: int, cells: list[str]) -> dict[str, object]:
    """A scores-export row longer than its header, to write through: its id cell
    as read, its cells in the rationale, no label (none of its values is trusted)."""
    return {
        LONG_ROW: f"{path.name}:line {line}",
        "id": cells[header.index("id")],
        "comment": f"{path}: line {line}: {len(cells)} cells under a header of "
        f"{len(header)}, not read (a cell split in two): {json.dumps(cells, ensure_ascii=False)}",
    }


def _from_csv(row: dict[str, str]) -> dict[str, object]:
    """A UI export CSV row: empty cells are null, value a number."""
    record: dict[str, object] = {k: (v if v != "" else None) for k, v in row.items()}
    try:
        record["value"] = float(row["value"]) if row.get("value") else None
    except ValueError:
        record["value"] = row["value"]
    return record


def _from_table_csv(row: dict[str, str]) -> dict[str, object]:
    """An observations or traces table export's CSV row: Langfuse's CSV writer
    (transformStreamToCsv) writes strings as they are (``stringifyForCsv``) and
    other values (objects, lists, dates) JSON.stringify'd, so a cell that reads as
    a JSON object or list is that value, and a quoted cell is decoded only when it
    is a JSON-encoded date (a string that begins with a quote is kept as written).
    Its earlier writer JSON.stringify'd every value, strings too: a row whose id
    is quoted decodes every quoted cell. Empty cells are null."""
    quoted = row.get("id", "")[:1] == '"'
    record: dict[str, object] = {}
    for key, cell in row.items():
        value: object = cell if cell != "" else None
        if cell[:1] in ("{", "[") or (cell[:1] == '"' and (quoted or JSON_DATE.fullmatch(cell))):
            with contextlib.suppress(ValueError):  # text that only starts like JSON
                value = json.loads(cell)
        record[key] = value
    return record


def _label(score: dict) -> object:
    if score["dataType"] == "NUMERIC":
        return score.get("value")
    if score["dataType"] == "BOOLEAN":
        text = score.get("stringValue")
        if text in ("True", "False"):
            return text
        value = score.get("value")
        # NaN and infinities name no label: as before, the value as it is
        return BOOLEAN_LABELS.get(float(value), value) if is_finite_number(value) else value
    return score.get("stringValue")


class _Traces:
    """Models of traces and observations, from the traces/observations records."""

    def __init__(self, traces: list[dict], observations: list[dict]) -> None:
        self.traces = {str(t["id"]): t for t in traces}
        self.observations = {str(o["id"]): o for o in observations}
        self.by_trace: dict[str, list[dict]] = {}
        for o in sorted(observations, key=lambda o: str(o.get("startTime") or "")):
            if o.get("type") == "GENERATION" and o.get("model"):
                self.by_trace.setdefault(str(o["traceId"]), []).append(o)

    def model(self, trace_id: object, observation_id: object = None) -> tuple[str | None, bool]:
        """(model, ambiguous): the observation's model, else the trace's GENERATIONs'."""
        if observation_id and self.observations.get(str(observation_id), {}).get("model"):
            return str(self.observations[str(observation_id)]["model"]), False
        generations = self.by_trace.get(str(trace_id), [])
        models = {str(o["model"]) for o in generations}
        return (str(generations[-1]["model"]) if generations else None), len(models) > 1


def _item(score: dict) -> str | None:
    if score.get("traceId"):
        obs = score.get("observationId")
        return f"{score['traceId']}:{obs}" if obs else str(score["traceId"])
    if score.get("sessionId"):
        return f"session:{score['sessionId']}"
    return None


def import_langfuse(
    files: Sequence[str | Path],
    out_dir: str | Path,
    models: str | Path | None = None,
    judges: Iterable[str] | Mapping[str, str] | None = None,
) -> dict[str, int]:
    """Convert Langfuse score exports (and their traces) to the input contract.

    ``judges``: score name -> judge model (``--judge NAME=MODEL``). Returns the
    number of rows written per output file."""
    judge_of = dict(judges) if isinstance(judges, Mapping) else parse_judges(judges)
    found: dict[str, list[dict]] = {"score": [], "observation": [], "trace": [], LONG_ROW: []}
    unknown = 0
    for path in map(Path, files):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        records = _records(path)
        kinds = [_kind(r) for r in records]
        if records and not any(kinds):
            raise InputError(f"{path}: not {WHAT}: no score, trace or observation records")
        unknown += kinds.count(None)
        for record, kind in zip(records, kinds, strict=True):
            if kind:
                found[kind].append(record)  # type: ignore[arg-type]
    traces = _Traces(found["trace"], found["observation"])
    notes: Counter[str] = Counter()
    seen: set[str] = set()
    written: set[str] = set()
    ratings: list[dict[str, object]] = []
    humans: list[dict[str, object]] = []
    prompts: dict[str, dict[str, object]] = {}
    completions: dict[tuple[str, str], dict[str, object]] = {}
    for k, score in enumerate(found["score"]):
        sid = str(score.get("id") or f"#{k}")
        if sid in seen:
            notes["score id(s) seen twice, written once"] += 1
            continue
        seen.add(sid)
        source, name, data_type = score["source"], str(score["name"]), score["dataType"]
        if source not in (*JUDGE_SOURCES, "ANNOTATION"):
            notes[f"score(s) of source {source!r} skipped (EVAL, API, ANNOTATION are known)"] += 1
            continue
        if data_type not in LABEL_TYPES:
            notes[f"{data_type} score(s) skipped (not a rating)"] += 1
            continue
        pid = _item(score)
        if pid is None:
            notes["dataset-run score(s) skipped (they grade a run, not an output)"] += 1
            continue
        if source == "API" and name not in judge_of:
            notes["API score(s) skipped (name them with --judge NAME=MODEL)"] += 1
            continue
        model, ambiguous = traces.model(score.get("traceId"), score.get("observationId"))
        notes["score(s) on a trace with several generation models: the last one"] += ambiguous
        notes["score(s) with no model found: model 'unknown'"] += model is None
        model = model or "unknown"
        trace = traces.traces.get(str(score.get("traceId")), {})
        prompts.setdefault(
            pid,
            {
                "prompt_id": pid,
                "dataset": trace.get("name") or "langfuse",
                "prompt_text": _text(trace.get("input")),
            },
        )
        completions.setdefault(
            (pid, model),
            {"prompt_id": pid, "model": model, "completion_text": _text(trace.get("output"))},
        )
        written.add(sid)
        row = {"prompt_id": pid, "model": model, "dimension": name, "label": _label(score),
               "rationale": score.get("comment"), "score_id": sid}  # fmt: skip
        if source in JUDGE_SOURCES:
            judge, _ = traces.model(score.get("executionTraceId"))
            if judge is None and score.get("executionTraceId"):
                notes["EVAL score(s) whose execution trace is not in the files"] += 1
            judge = judge or judge_of.get(name)
            notes["EVAL score(s) with no judge model: judge 'evaluator:<name>'"] += judge is None
            ratings.append(
                {
                    **row,
                    "judge": judge or f"evaluator:{name}",
                    "source": source,
                    "data_type": data_type,
                }
            )
        else:
            annotator = score.get("authorUserId") or score.get("authorUserName")
            notes["ANNOTATION score(s) with no author: 'unknown-annotator'"] += not annotator
            humans.append({**row, "annotator_id": annotator or "unknown-annotator"})
    if unknown:
        notes["record(s) neither score, trace nor observation, not read"] += unknown
    names = [str(r["judge"]) for r in ratings] + [m for _, m in completions]
    for record in found[LONG_ROW]:  # written through for the build to reject
        ratings.append({"prompt_id": record[LONG_ROW], "model": "unknown", "dimension": "unread",
                        "label": None, "rationale": record["comment"], "score_id": record["id"],
                        "judge": "unknown"})  # fmt: skip
    for note, n in notes.items():
        if n:
            print(f"langfuse: {n} {note}", file=sys.stderr)
    out = Path(out_dir)
    return {
        "judge_ratings": write_contract_file(out, "judge_ratings", ratings, RATING_EXTRAS),
        "human_annotations": write_contract_file(out, "human_annotations", humans, HUMAN_EXTRAS),
        "prompts": write_contract_file(out, "prompts", prompts.values()),
        "completions": write_contract_file(out, "completions", completions.values()),
        "rating_scales": write_contract_file(
            out, "rating_scales", scale_rows(found["score"], written), SCALE_EXTRAS
        ),
        "models": write_models(out, names, None, models),
    }


def _text(value: object) -> object:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def scale_rows(scores: list[dict], ids: set[str]) -> list[dict[str, object]]:
    """rating_scales rows per score name, from the scores written."""
    numbers: dict[str, list[float]] = {}
    booleans: set[str] = set()
    categories: dict[str, dict[str, object]] = {}
    for k, s in enumerate(scores):
        if str(s.get("id") or f"#{k}") not in ids:
            continue
        name, value = str(s["name"]), s.get("value")
        if s["dataType"] == "NUMERIC" and isinstance(value, int | float):
            numbers.setdefault(name, []).append(float(value))
        elif s["dataType"] == "BOOLEAN":
            booleans.add(name)
        elif s["dataType"] == "CATEGORICAL" and s.get("stringValue") is not None:
            cats = categories.setdefault(name, {})
            label = str(s["stringValue"])
            if cats.get(label) is not None and value is not None and cats[label] != value:
                raise InputError(
                    f"score {name!r}: category {label!r} has two values ({cats[label]}, {value})"
                )
            if cats.get(label) is None:
                cats[label] = value
    rows: list[dict[str, object]] = []
    for name, values in numbers.items():
        low, high = min(values), max(values)
        ends = sorted({min(low, 0.0), max(high, 1.0)}) if low == high else [low, high]
        rows += [{"dimension": name, "label": csv_text(v), "score": v} for v in ends]
    for name in booleans:
        rows += [
            {"dimension": name, "label": k, "score": v} for k, v in (("True", 1), ("False", 0))
        ]
    for name, cats in categories.items():
        valued = all(isinstance(v, int | float) for v in cats.values())
        for code, label in enumerate(sorted(cats)):
            rows.append(
                {
                    "dimension": name,
                    "label": label,
                    "score": cats[label] if valued else code,
                    "scale_level": "ordinal" if valued else "nominal",
                }
            )
    return rows
