"""MLflow 3 trace assessments: search_traces exports, a sqlite store or a tracking URI.

Sources (judge_bias.inputs.importers.mlflow_sources): a ``mlflow.search_traces()``
export or a JSON list of ``Trace.to_dict()``, read without MLflow; a local
``sqlite:///`` store (or its ``.db`` file), read with SQL; any other tracking URI
through MLflow's API (``pip install 'judge-bias[mlflow]'``).

Each *feedback* assessment (MLflow 3.x: ``assessment_name``, ``source.source_type``,
``source.source_id``, ``feedback.value``, ``rationale``, ``span_id``) becomes a row
by its source type:

- **LLM_JUDGE** (and the legacy AI_JUDGE) -> judge_ratings: judge = ``source_id``,
  dimension = the assessment's name, label = its value, run_id = the trace id
  (several traces of one request and model are reruns); extra columns trace_id,
  assessment_id, span_id, rationale.
- **HUMAN** -> human_annotations: annotator_id = ``source_id``, same dimension and
  label; extra columns trace_id, rationale.
- **CODE** (heuristic scorers), expectations (ground truth, not a rating),
  sources of no type and assessments superseded by an override (``valid`` false)
  are not ratings: they are counted and named on stderr, not written.
- A feedback that carries an error and no value is written with an empty label:
  the build rejects it (missing value); the importer says how many.
- **model** = the traced model: the ``mlflow.llm.model`` attribute MLflow's
  autologging writes on the trace's LLM spans; ``--model-tag KEY`` takes it from
  the trace tag (or trace metadata) KEY instead. A trace with no model or several
  distinct models gets an empty model (rejected by the build; counted here).
- **prompt_id** = ``p-`` + the first 12 hex digits of the SHA-1 of the trace's
  request (``mlflow.traceInputs``), so traces of one request to several models
  share a prompt; prompt_text and completion_text are the request and response.
- **rating_scales**, per dimension, from the values of its judges and humans:
  booleans true 1 / false 0; MLflow's yes/no CategoricalRating yes 1 / no 0;
  numbers: the smallest and largest seen (a number between is on the scale);
  other text: the labels in sorted order scored 0, 1, ... with scale_level
  nominal (edit rating_scales.csv to order an ordinal scale). A value off its
  dimension's scale (a dict, a list, text among numbers) is written as given
  and rejected by the build; the importer says how many.
- **Names**: MLflow's judges name their model by URI (``source_id`` =
  ``openai:/gpt-4o``): models.csv maps a name to the part after its
  ``<provider>:/`` (so that judge is the traced model gpt-4o: self-judgments),
  every other name to itself, family from its prefix (override with
  ``--models``).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import default_family, report_unmapped, write_models
from judge_bias.inputs.importers.mlflow_sources import Trace, read_source
from judge_bias.inputs.writer import csv_text, write_contract_file
from judge_bias.stats.scalars import is_finite_number

JUDGE_SOURCES = ("LLM_JUDGE", "AI_JUDGE")
RATING_EXTRAS = ("trace_id", "assessment_id", "span_id", "rationale")
HUMAN_EXTRAS = ("trace_id", "rationale")
SCALE_EXTRAS = ("scale_level",)
YES_NO = {"yes": 1, "no": 0}


def canonical(name: str) -> tuple[str, str]:
    """(model, family) of a name: a model URI's part after ``<provider>:/``."""
    model = re.sub(r"^[A-Za-z0-9_.-]+:/+", "", name)
    return model, default_family(model)


def prompt_id(trace: Trace) -> str:
    """``p-`` + the SHA-1 of the trace's request (its trace id when it has none)."""
    if not trace.request:
        return trace.trace_id
    return "p-" + hashlib.sha1(trace.request.encode("utf-8")).hexdigest()[:12]


def traced_model(trace: Trace, model_tag: str | None) -> str:
    """The model a trace called: the tag or metadata ``model_tag``, else its one span
    model; empty when there is none or several."""
    if model_tag:
        return trace.tags.get(model_tag) or trace.metadata.get(model_tag) or ""
    return trace.models[0] if len(trace.models) == 1 else ""


def scale_rows(dimension: str, values: list[object]) -> list[dict[str, object]]:
    """A dimension's rating scale from the values given on it (module docstring)."""
    given = [v for v in values if v is not None]
    if given and all(isinstance(v, bool) for v in given):
        return [
            {"dimension": dimension, "label": k, "score": s} for k, s in (("true", 1), ("false", 0))
        ]
    texts = {v for v in given if isinstance(v, str)}
    if texts and {t.lower() for t in texts} <= set(YES_NO):
        return [
            {"dimension": dimension, "label": t, "score": YES_NO[t.lower()]} for t in sorted(texts)
        ]
    numbers = [v for v in given if is_finite_number(v)]
    if numbers:
        ends = sorted({min(numbers), max(numbers)})
        return [{"dimension": dimension, "label": n, "score": n} for n in ends]
    return [
        {"dimension": dimension, "label": t, "score": i, "scale_level": "nominal"}
        for i, t in enumerate(sorted(texts))
    ]


def _on_scale(value: object, scale: list[dict[str, object]]) -> bool:
    labels = {csv_text(r["label"]) for r in scale}
    if csv_text(value) in labels:
        return True
    numbers = [r["score"] for r in scale if is_finite_number(r["label"])]
    return is_finite_number(value) and bool(numbers) and min(numbers) <= value <= max(numbers)  # type: ignore[type-var,operator]


def import_mlflow(
    files: Sequence[str | Path],
    out_dir: str | Path,
    models: str | Path | None = None,
    model_tag: str | None = None,
) -> dict[str, int]:
    """Convert MLflow traces' assessments to the input contract in ``out_dir``.

    Returns the number of rows written per output file."""
    ratings: list[dict[str, object]] = []
    humans: list[dict[str, object]] = []
    prompts: dict[str, dict[str, object]] = {}
    completions: dict[tuple[str, str], dict[str, object]] = {}
    values: dict[str, list[object]] = {}
    skipped: Counter[str] = Counter()
    no_model = errors = n_traces = 0
    for source in map(str, files):
        for trace in read_source(source):
            n_traces += 1
            pid, model = prompt_id(trace), traced_model(trace, model_tag)
            prompts.setdefault(pid, {"prompt_id": pid, "prompt_text": trace.request})
            if model:
                completions.setdefault(
                    (pid, model),
                    {"prompt_id": pid, "model": model, "completion_text": trace.response},
                )
            rated = False
            for a in trace.assessments:
                source_type = a.source_type.upper()
                if a.kind != "feedback":
                    skipped[f"{a.kind} assessment(s)"] += 1
                    continue
                if not a.valid:
                    skipped["assessment(s) superseded by an override"] += 1
                    continue
                if source_type not in (*JUDGE_SOURCES, "HUMAN"):
                    skipped[f"{source_type} assessment(s)"] += 1
                    continue
                rated = True
                errors += a.value is None
                values.setdefault(a.name, []).append(a.value)
                row: dict[str, object] = {
                    "prompt_id": pid, "model": model, "dimension": a.name, "label": a.value,
                    "trace_id": trace.trace_id, "rationale": a.rationale,
                }  # fmt: skip
                if source_type == "HUMAN":
                    humans.append({**row, "annotator_id": a.source_id})
                else:
                    ratings.append(
                        {**row, "judge": a.source_id, "run_id": trace.trace_id,
                         "assessment_id": a.assessment_id, "span_id": a.span_id}
                    )  # fmt: skip
            no_model += rated and not model
    for what, n in sorted(skipped.items()):
        print(f"mlflow: {n} {what} not imported (not a judge or human rating)", file=sys.stderr)
    if not ratings and not humans:
        what = f"{sum(skipped.values())} assessment(s), none" if skipped else "no assessment,"
        raise InputError(
            f"{', '.join(map(str, files))}: {n_traces} trace(s) with {what} a judge or "
            "human feedback: nothing to import (MLflow before 2.21 records no feedback on "
            "traces; mlflow.evaluate()'s table is read by import mapping --config "
            "docs/mapping/mlflow2_eval_table.yml)"
        )
    scales = {dim: scale_rows(dim, vals) for dim, vals in values.items()}
    off_scale = sum(
        not _on_scale(r["label"], scales[str(r["dimension"])])
        for r in (*ratings, *humans)
        if r["label"] is not None
    )
    if no_model:
        how = f"no tag or metadata {model_tag!r}" if model_tag else "no single mlflow.llm.model"
        report_unmapped("mlflow", no_model, f"rated trace(s) with {how} (empty model)")
    report_unmapped("mlflow", errors, "feedback(s) with an error and no value")
    report_unmapped("mlflow", off_scale, "value(s) off their dimension's scale")
    names = [str(r["judge"]) for r in ratings] + [m for _, m in completions]
    defaults = {n: canonical(n) for n in names}
    out = Path(out_dir)
    return {
        "judge_ratings": write_contract_file(out, "judge_ratings", ratings, RATING_EXTRAS),
        "human_annotations": write_contract_file(out, "human_annotations", humans, HUMAN_EXTRAS),
        "prompts": write_contract_file(out, "prompts", prompts.values()),
        "completions": write_contract_file(out, "completions", completions.values()),
        "rating_scales": write_contract_file(
            out, "rating_scales", [r for rows in scales.values() for r in rows], SCALE_EXTRAS
        ),
        "models": write_models(out, names, defaults, models),
    }
