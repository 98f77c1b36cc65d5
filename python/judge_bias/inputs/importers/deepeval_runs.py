"""DeepEval test runs (.deepeval/.latest_test_run.json): each metric's score per test case.

A file is what DeepEval 4.x writes after ``evaluate()`` or ``deepeval test run``:
``{"testRunData": TestRun}`` in ``.deepeval/.latest_test_run.json``, or the
TestRun itself (``.deepeval/.latest_run_full.json``, ``test_run_<time>.json`` in
DEEPEVAL_RESULTS_FOLDER); the schema is deepeval/test_run/test_run.py (TestRun:
``testCases``, ``conversationalTestCases``, ``hyperparameters``, ``identifier``)
and deepeval/tracing/api.py (MetricData: ``name``, ``score``, ``threshold``,
``success``, ``reason``, ``evaluationModel``, ``strictMode``, ``error``).
Older versions are read too: DeepEval 1.x-3.x keep a case's metadata in
``additionalMetadata`` (2.x writes no ``.latest_test_run.json``: the run is the
file DEEPEVAL_RESULTS_FOLDER gets); 0.20 has ``metricsMetadata`` (a metric's name
in ``metric``) and the hyperparameters in ``configurations``; 0.20.0-0.20.40's
metricsMetadata is only ``metric``, ``score`` and ``minimumScore`` (read as the
threshold: deepeval/api.py of 0.20.0, test_run/api.py of 0.20.40), with no
judge model at all; ``evaluate()``'s
EvaluationResult saved with ``model_dump()`` (``test_results``, ``metrics_data``:
field names, not aliases) is read by field name.

- **judge_ratings**: one row per test case x metric that names an
  ``evaluationModel``: judge = that model, dimension = the metric's name as
  DeepEval reports it ("Correctness [GEval]"), label = its score (0-1), run_id
  = the run's ``identifier``, else the file's name (one test run per file);
  extra columns test_case (the case's name), threshold, success, reason,
  strict_mode, evaluation_cost, error: DeepEval's own pass/fail is kept beside
  the score.
- **model** = the model under test: the test case's metadata ``model`` (from
  ``additional_metadata``: ``metadata``, or ``additionalMetadata`` before 4.x, in
  the file), else the run's ``hyperparameters["model"]`` (DeepEval's way of
  logging it: ``evaluate(..., hyperparameters={"model": ...})``); ``--model-tag
  KEY`` reads KEY instead. A case with neither gets an empty model, rejected by
  the build; the importer says how many.
- **prompt_id** = ``p-`` + the first 12 hex digits of the SHA-1 of the case's
  input (of its name for a conversational case), so runs of one dataset over
  several models share prompts; prompt_text and completion_text are the input
  and actual output.
- ``--judge METRIC=MODEL`` names the judge of a metric whose results record
  none (DeepEval 0.20.0-0.20.40 records no judge model: its ``minimumScore``
  metrics are counted and named on stderr with that hint, not written).
  Other metrics without an evaluation model (Exact Match, Pattern Match, JSON
  Correctness: code, not a judge) are counted and named on stderr, not
  written. A metric that errored (no score) is written with an empty label and
  rejected by the build; the importer says how many.
- **rating_scales**: each dimension 0 to 1 (a score in between is on the
  scale; one outside is rejected by the build).
- DeepEval records no human labels: join them from a separate file, or
  judge-human figures stay empty.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar, cast

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import (
    parse_judges,
    read_json,
    report_unmapped,
    write_models,
)
from judge_bias.inputs.writer import write_contract_file

RATING_EXTRAS = (
    "test_case", "threshold", "success", "reason", "strict_mode", "evaluation_cost", "error",
)  # fmt: skip
WHAT = "a DeepEval test run"
T = TypeVar("T")
# DeepEval writes its files by alias (camelCase); a model_dump() without by_alias (or
# evaluate()'s EvaluationResult: test_results) has the field names: read both
ALIASES = {
    "test_cases": "testCases", "test_results": "testCases",
    "conversational_test_cases": "conversationalTestCases",
    "metrics_data": "metricsData", "metrics_metadata": "metricsMetadata",
    "actual_output": "actualOutput", "additional_metadata": "additionalMetadata",
    "evaluation_model": "evaluationModel", "strict_mode": "strictMode",
    "evaluation_cost": "evaluationCost", "test_run_data": "testRunData",
    "minimum_score": "minimumScore",
}  # fmt: skip


def prompt_key(text: str) -> str:
    """``p-`` + the first 12 hex digits of the SHA-1 of ``text``."""
    return "p-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def aliased(record: T) -> T:
    """A record with DeepEval's camelCase aliases of its snake_case fields added
    (an alias already present wins); anything else as given."""
    if not isinstance(record, dict):
        return record
    extra = {ALIASES[k]: v for k, v in record.items() if k in ALIASES and ALIASES[k] not in record}
    return cast(T, {**record, **extra}) if extra else record


def read_run(path: Path) -> dict:
    """The TestRun object of a file (unwrapped from ``testRunData``)."""
    data = aliased(read_json(path, WHAT))
    if isinstance(data, dict) and "testRunData" in data:
        data = aliased(data["testRunData"])
    elif isinstance(data, dict) and "testRunLink" in data:
        raise InputError(
            f"{path}: holds only a Confident AI link (testRunLink), no results: "
            "run the evaluation without Confident AI or export the test run"
        )
    if not isinstance(data, dict) or not (
        isinstance(data.get("testCases"), list)
        or isinstance(data.get("conversationalTestCases"), list)
    ):
        keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else type(data).__name__
        raise InputError(
            f"{path}: not {WHAT}: expected testCases (a .deepeval/.latest_test_run.json, "
            f"DeepEval 0.20 to 4.x), found {keys or 'an empty object'}"
        )
    return data


def metrics_of(case: dict, path: Path) -> list[dict]:
    """A test case's metric results: ``metricsData`` (DeepEval 0.21 on), else the
    ``metricsMetadata`` of DeepEval 0.20 (its name in ``metric``)."""
    case = aliased(case)
    metrics = case.get("metricsData")
    if metrics is None:
        metrics = case.get("metricsMetadata")
    if metrics is None:
        return []
    if not isinstance(metrics, list) or not all(isinstance(m, dict) for m in metrics):
        raise InputError(f"{path}: not {WHAT}: a test case's metricsData is not a list of objects")
    return [aliased(m) for m in metrics]


def metric_name(metric: dict) -> object:
    """A metric result's name: ``name``, or DeepEval 0.20's ``metric``."""
    return metric["name"] if "name" in metric else metric.get("metric")


def import_deepeval(
    files: Sequence[str | Path],
    out_dir: str | Path,
    models: str | Path | None = None,
    model_tag: str | None = None,
    judges: Iterable[str] | None = None,
) -> dict[str, int]:
    """Convert DeepEval test runs to the input contract in ``out_dir``.

    ``judges``: metric name -> judge model (``--judge METRIC=MODEL``), for metric
    results that name none. Returns the number of rows written per output file."""
    key = model_tag or "model"
    judge_of = parse_judges(judges)
    unrecorded: Counter[str] = Counter()  # 0.20.0-0.20.40: no judge field at all
    ratings: list[dict[str, object]] = []
    prompts: dict[str, dict[str, object]] = {}
    completions: dict[tuple[str, str], dict[str, object]] = {}
    dimensions: dict[str, None] = {}
    not_judged: Counter[str] = Counter()
    no_model = errored = 0
    runs: Counter[str] = Counter()
    for path in map(Path, files):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        run = read_run(path)
        run_id = str(run.get("identifier") or path.stem.lstrip(".") or path.name)
        runs[run_id] += 1
        run_id = run_id if runs[run_id] == 1 else f"{run_id}-{runs[run_id]}"
        hyper = run.get("hyperparameters") or run.get("configurations") or {}
        cases = [*(run.get("testCases") or []), *(run.get("conversationalTestCases") or [])]
        for case in cases:
            if not isinstance(case, dict):
                raise InputError(f"{path}: not {WHAT}: a test case is not an object")
            case = aliased(case)
            metadata = case.get("metadata") or case.get("additionalMetadata") or {}
            model = str(metadata.get(key) or hyper.get(key) or "")
            text = case.get("input")
            pid = prompt_key(str(text if text is not None else case.get("name")))
            prompts.setdefault(pid, {"prompt_id": pid, "prompt_text": text})
            if model:
                completions.setdefault(
                    (pid, model),
                    {"prompt_id": pid, "model": model, "completion_text": case.get("actualOutput")},
                )
            judged = False
            for metric in metrics_of(case, path):
                name = metric_name(metric)
                judge = metric.get("evaluationModel") or judge_of.get(str(name))
                if not judge:
                    early = "minimumScore" in metric and "evaluationModel" not in metric
                    (unrecorded if early else not_judged)[str(name)] += 1
                    continue
                judged = True
                errored += metric.get("score") is None
                dimensions[str(name)] = None
                ratings.append(
                    {
                        "judge": judge, "prompt_id": pid, "model": model,
                        "dimension": name, "label": metric.get("score"),
                        "run_id": run_id, "test_case": case.get("name"),
                        "threshold": metric.get("threshold", metric.get("minimumScore")),
                        "success": metric.get("success"),
                        "reason": metric.get("reason"), "strict_mode": metric.get("strictMode"),
                        "evaluation_cost": metric.get("evaluationCost"),
                        "error": metric.get("error"),
                    }
                )  # fmt: skip
            no_model += judged and not model
    if not_judged:
        named = ", ".join(f"{name} ({n})" for name, n in sorted(not_judged.items()))
        print(
            f"deepeval: {sum(not_judged.values())} score(s) of metrics without an "
            f"evaluation model not imported (code, not a judge): {named}; a judge's "
            "metric? name its model with --judge 'METRIC=MODEL'",
            file=sys.stderr,
        )
    if unrecorded:
        named = ", ".join(f"{name} ({n})" for name, n in sorted(unrecorded.items()))
        print(
            f"deepeval: {sum(unrecorded.values())} score(s) not imported: DeepEval "
            "0.20.0-0.20.40 (metricsMetadata with minimumScore) records no judge model: "
            f"{named}; name each metric's judge with --judge 'METRIC=MODEL'",
            file=sys.stderr,
        )
    report_unmapped(
        "deepeval",
        no_model,
        f"test case(s) without a {key!r} in metadata or hyperparameters (empty model)",
    )
    report_unmapped("deepeval", errored, "metric result(s) with an error and no score")
    scales = [{"dimension": d, "label": s, "score": s} for d in dimensions for s in (0, 1)]
    names = [str(r["judge"]) for r in ratings] + [m for _, m in completions]
    out = Path(out_dir)
    return {
        "judge_ratings": write_contract_file(out, "judge_ratings", ratings, RATING_EXTRAS),
        "prompts": write_contract_file(out, "prompts", prompts.values()),
        "completions": write_contract_file(out, "completions", completions.values()),
        "rating_scales": write_contract_file(out, "rating_scales", scales),
        "models": write_models(out, names, None, models),
    }
