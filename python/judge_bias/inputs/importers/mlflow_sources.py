"""Where MLflow traces are read from, each turned into one plain record per trace
(``Trace``) for judge_bias.inputs.importers.mlflow_traces.

- **Exports** (no MLflow needed): a ``mlflow.search_traces()`` DataFrame written
  with ``to_json(orient="records")`` (``.json``; ``lines=True``: ``.jsonl``) or
  ``to_parquet`` (``.parquet``; nested columns may be JSON text, as pyarrow cannot
  store mixed-type assessment values otherwise); a JSON list of
  ``Trace.to_dict()`` (or one trace, as ``mlflow traces get`` prints it). A record's
  ``trace`` column (MLflow's JSON of the whole trace) is read first; without it,
  the ``assessments``, ``tags``, ``trace_metadata`` and ``spans`` columns.
- **A local sqlite store** (``sqlite:///PATH`` or the ``.db`` file itself; no MLflow
  needed): read with SQL from the tables of MLflow's tracking schema
  (mlflow/store/tracking/dbmodels/models.py: ``trace_info``, ``trace_tags``,
  ``trace_request_metadata``, ``assessments``, ``spans``), as MLflow 3.17.2
  writes them (alembic head dc11669786a5). MLflow 3.17.2 itself pins
  pyarrow<26, which our lock does not allow, hence SQL rather than its API.
- **Any other tracking URI** (``http(s)://``, ``databricks``, ...): through MLflow's
  own ``search_traces`` (the ``mlflow`` extra).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._extras import require
from judge_bias.inputs.importers._write import read_text

SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_TABLES = ("trace_info", "trace_tags", "trace_request_metadata", "assessments", "spans")
# the span attribute MLflow's autologging writes the called model's name to
MODEL_ATTRIBUTE = "mlflow.llm.model"
NESTED = (
    "trace", "request", "response", "trace_metadata", "request_metadata", "tags", "spans",
    "assessments",
)  # fmt: skip


@dataclass
class Assessment:
    """One MLflow assessment, as the importer needs it."""

    name: str
    source_type: str
    source_id: str
    kind: str  # feedback, expectation or other
    value: object = None
    error: str | None = None
    rationale: str | None = None
    span_id: str | None = None
    assessment_id: str | None = None
    valid: bool = True


@dataclass
class Trace:
    """One MLflow trace: its ids, tags, metadata, the models its spans called, the
    request and response texts and its assessments."""

    trace_id: str
    tags: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    request: str | None = None
    response: str | None = None
    assessments: list[Assessment] = field(default_factory=list)


def _maybe_json(value: object) -> object:
    """A nested column written as JSON text (Parquet) parsed back; others as given."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _attribute(value: object) -> object:
    """A span attribute: MLflow stores each as JSON text (a name as ``"gpt-4o"``)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _number(value: object) -> object:
    """A whole float as an int: MLflow's protobuf form holds every number as a double
    (4 -> 4.0) while its sqlite store keeps the JSON as logged (4)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def assessment_from_dict(a: dict) -> Assessment:
    """An assessment from MLflow's dictionary form (Assessment.to_dictionary())."""
    source = a.get("source") or {}
    kind, value = "other", None
    if isinstance(a.get("feedback"), dict):
        kind, value = "feedback", a["feedback"].get("value")
        error = a["feedback"].get("error") or a.get("error")
    elif isinstance(a.get("expectation"), dict):
        kind = "expectation"
        exp = a["expectation"]
        value = exp.get("value", (exp.get("serialized_value") or {}).get("value"))
        error = a.get("error")
    else:
        error = a.get("error")
    return Assessment(
        name=str(a.get("assessment_name") or a.get("name") or ""),
        source_type=str(source.get("source_type") or "SOURCE_TYPE_UNSPECIFIED"),
        source_id=str(source.get("source_id") or ""),
        kind=kind,
        value=_number(value),
        error=_text(error),
        rationale=a.get("rationale"),
        span_id=a.get("span_id"),
        assessment_id=a.get("assessment_id"),
        valid=a.get("valid") is not False,
    )


def span_models(spans: object) -> list[str]:
    """The distinct models the spans called (their ``mlflow.llm.model`` attribute)."""
    models: list[str] = []
    for span in spans if isinstance(spans, list) else []:
        attrs = span.get("attributes") if isinstance(span, dict) else None
        model = _attribute((attrs or {}).get(MODEL_ATTRIBUTE))
        if isinstance(model, str) and model and model not in models:
            models.append(model)
    return models


def trace_from_record(record: dict) -> Trace:
    """A trace from a Trace.to_dict() object or a search_traces record."""
    record = {k: (_maybe_json(v) if k in NESTED else v) for k, v in record.items()}
    if isinstance(record.get("trace"), dict):
        record = record["trace"]
    if isinstance(record.get("info"), dict):
        info, spans = record["info"], (record.get("data") or {}).get("spans")
        # MLflow 2 names the metadata request_metadata (and the trace id request_id)
        tags = info.get("tags") or {}
        metadata = info.get("trace_metadata") or info.get("request_metadata") or {}
        assessments = info.get("assessments") or []
        request = metadata.get("mlflow.traceInputs", info.get("request_preview"))
        response = metadata.get("mlflow.traceOutputs", info.get("response_preview"))
    else:
        info, spans = record, record.get("spans")
        tags = record.get("tags") or {}
        metadata = record.get("trace_metadata") or record.get("request_metadata") or {}
        assessments = record.get("assessments") or []
        request, response = _text(record.get("request")), _text(record.get("response"))
    trace_id = info.get("trace_id") or info.get("request_id")
    if not trace_id or not isinstance(assessments, list):
        raise InputError("a record without trace_id or assessments")
    return Trace(
        trace_id=str(trace_id),
        tags={str(k): str(v) for k, v in tags.items()},
        metadata={str(k): str(v) for k, v in metadata.items()},
        models=span_models(spans),
        request=_text(request),
        response=_text(response),
        assessments=[assessment_from_dict(a) for a in assessments if isinstance(a, dict)],
    )


def _records(path: Path) -> list[dict]:
    """The records of a JSON, JSON Lines or Parquet export."""
    what = "an MLflow traces export"
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow's errors do not name the file
            raise InputError(f"{path}: not {what}: not Parquet ({exc})") from exc
    text = read_text(path, what)
    try:
        if path.suffix.lower() == ".jsonl":
            data: object = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not {what}: not JSON ({exc})") from exc
    if _is_eval_table(data):
        raise InputError(
            f"{path}: an MLflow 2 mlflow.evaluate() results table (eval_results_table.json, "
            "<metric>/v1/score columns), not traces: import it with judge-bias import "
            "mapping --config docs/mapping/mlflow2_eval_table.yml"
        )
    data = [data] if isinstance(data, dict) else data
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError(f"{path}: not {what}: expected a JSON list of trace records")
    return data


def _is_eval_table(data: object) -> bool:
    """MLflow 2's eval_results_table.json: mlflow.log_table's split layout
    (``{columns, data}``) with ``<metric>/<version>/score`` columns."""
    columns = data.get("columns") if isinstance(data, dict) else None
    return (
        isinstance(columns, list)
        and "data" in data  # type: ignore[operator]
        and any(str(c).endswith("/score") for c in columns)
    )


def read_export(path: Path) -> list[Trace]:
    """The traces of one export file, or a one-line error naming it."""
    traces = []
    for i, record in enumerate(_records(path), 1):
        try:
            traces.append(trace_from_record(record))
        except (ValueError, AttributeError, TypeError) as exc:
            raise InputError(f"{path}: record {i} is not an MLflow trace ({exc})") from exc
    return traces


def _rows(db: sqlite3.Connection, sql: str) -> Iterator[tuple]:
    yield from db.execute(sql)


def read_sqlite_store(path: Path) -> list[Trace]:
    """Every trace of a local MLflow sqlite store, read with SQL (module docstring)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    except sqlite3.Error as exc:
        raise InputError(f"{path}: not an MLflow sqlite store ({exc})") from exc
    missing = [t for t in STORE_TABLES if t not in tables]
    if missing:
        raise InputError(f"{path}: not an MLflow 3 tracking store: no table {', '.join(missing)}")
    try:
        columns = {r[1] for r in db.execute("pragma table_info(trace_info)")}
        # newer stores keep the trace name in a column, not in the mlflow.traceName tag
        name = "trace_name" if "trace_name" in columns else "null"
        traces = {
            tid: Trace(tid, tags={"mlflow.traceName": tname} if tname else {},
                       request=req, response=resp)
            for tid, req, resp, tname in _rows(
                db, f"select request_id, request_preview, response_preview, {name} "
                "from trace_info order by timestamp_ms, request_id",
            )
        }  # fmt: skip
        for table, attr in (("trace_tags", "tags"), ("trace_request_metadata", "metadata")):
            for key, value, tid in _rows(db, f"select key, value, request_id from {table}"):
                if tid in traces:
                    getattr(traces[tid], attr)[key] = value
        for tid, model in _rows(
            db, "select trace_id, model_name from spans where model_name is not null "
            "order by trace_id, start_time_unix_nano",
        ):  # fmt: skip
            model = _attribute(model)
            if tid in traces and isinstance(model, str) and model not in traces[tid].models:
                traces[tid].models.append(model)
        for (tid, name, kind, value, error, stype, sid, span, rationale, valid, aid) in _rows(
            db, "select trace_id, name, assessment_type, value, error, source_type, source_id, "
            "span_id, rationale, valid, assessment_id from assessments "
            "order by trace_id, created_timestamp, assessment_id",
        ):  # fmt: skip
            if tid not in traces:
                continue
            traces[tid].assessments.append(
                Assessment(
                    name=name, source_type=stype or "SOURCE_TYPE_UNSPECIFIED",
                    source_id=sid or "", kind=kind if kind in ("feedback", "expectation")
                    else "other", value=_number(json.loads(value)) if value else None, error=error,
                    rationale=rationale, span_id=span, assessment_id=aid, valid=bool(valid),
                )
            )  # fmt: skip
    except (sqlite3.Error, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: an MLflow store this importer cannot read ({exc})") from exc
    finally:
        db.close()
    for trace in traces.values():
        trace.request = trace.metadata.get("mlflow.traceInputs", trace.request)
        trace.response = trace.metadata.get("mlflow.traceOutputs", trace.response)
    return list(traces.values())


def read_tracking_uri(uri: str) -> list[Trace]:
    """Every trace of every experiment at a tracking URI, through MLflow's API."""
    mlflow = require("mlflow", "mlflow", f"judge-bias import mlflow {uri}")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)  # search_traces reads the global tracking URI
    try:
        ids = [e.experiment_id for e in mlflow.search_experiments()]
        found = mlflow.search_traces(locations=ids, return_type="list") if ids else []
    except Exception as exc:  # MLflow's client errors are long; keep the first line
        raise InputError(f"{uri}: MLflow could not list its traces ({exc})") from exc
    finally:
        mlflow.set_tracking_uri(previous)
    return [trace_from_record(t.to_dict()) for t in found]


def is_sqlite_file(path: Path) -> bool:
    """A file that starts with SQLite's header."""
    try:
        with path.open("rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def read_source(source: str) -> list[Trace]:
    """The traces of one FILE argument: an export, a sqlite store or a tracking URI."""
    if source.startswith("sqlite:///"):
        path = Path(source.removeprefix("sqlite:///"))  # sqlite:////abs or sqlite:///rel
        if not path.is_file():
            raise FileNotFoundError(f"{source}: no such sqlite store ({path})")
        return read_sqlite_store(path)
    if "://" in source or source == "databricks" or source.startswith("databricks://"):
        return read_tracking_uri(source)
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if is_sqlite_file(path):
        return read_sqlite_store(path)
    return read_export(path)
