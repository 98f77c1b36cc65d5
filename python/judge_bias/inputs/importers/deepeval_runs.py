"""DeepEval test runs (.deepeval/.latest_test_run.json): each metric's score per test case.

A file is what DeepEval 4.x writes after ``evaluate()`` or ``deepeval test run``:
``{"testRunData": TestRun}`` in ``.deepeval/.latest_test_run.json``, or the
TestRun itself (``.deepeval/.latest_run_full.json``, ``test_run_<time>.json`` in
DEEPEVAL_RESULTS_FOLDER); the schema is deepeval/test_run/test_run.py (TestRun:
``testCases``, ``conversationalTestCases``, ``hyperparameters``, ``identifier``)
and deepeval/tracing/api.py (MetricData: ``name``, ``score``, ``threshold``,
``success``, ``reason``, ``evaluationModel``, ``strictMode``, ``error``).

- **judge_ratings**: one row per test case x metric that names an
  ``evaluationModel``: judge = that model, dimension = the metric's name as
  DeepEval reports it ("Correctness [GEval]"), label = its score (0-1), run_id
  = the run's ``identifier``, else the file's name (one test run per file);
  extra columns test_case (the case's name), threshold, success, reason,
  strict_mode, evaluation_cost, error: DeepEval's own pass/fail is kept beside
  the score.
- **model** = the model under test: the test case's metadata ``model`` (from
  ``additional_metadata``), else the run's ``hyperparameters["model"]`` (DeepEval's
  way of logging it: ``evaluate(..., hyperparameters={"model": ...})``);
  ``--model-tag KEY`` reads KEY instead. A case with neither gets an empty
  model, rejected by the build; the importer says how many.
- **prompt_id** = ``p-`` + the first 12 hex digits of the SHA-1 of the case's
  input (of its name for a conversational case), so runs of one dataset over
  several models share prompts; prompt_text and completion_text are the input
  and actual output.
- Metrics without an evaluation model (Exact Match, Pattern Match, JSON
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
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import read_json, report_unmapped, write_models
from judge_bias.inputs.writer import write_contract_file

RATING_EXTRAS = (
    "test_case", "threshold", "success", "reason", "strict_mode", "evaluation_cost", "error",
)  # fmt: skip
WHAT = "a DeepEval test run"


def prompt_key(text: str) -> str:
    """``p-`` + the first 12 hex digits of the SHA-1 of ``text``."""
    return "p-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def read_run(path: Path) -> dict:
    """The TestRun object of a file (unwrapped from ``testRunData``)."""
    data = read_json(path, WHAT)
    if isinstance(data, dict) and "testRunData" in data:
        data = data["testRunData"]
    elif isinstance(data, dict) and "testRunLink" in data:
        raise InputError(
            f"{path}: holds only a Confident AI link (testRunLink), no results: "
            "run the evaluation without Confident AI or export the test run"
        )
    if not isinstance(data, dict) or not (
        isinstance(data.get("testCases"), list)
        or isinstance(data.get("conversationalTestCases"), list)
    ):
        raise InputError(f"{path}: not {WHAT}: expected testCases")
    return data


def import_deepeval(
    files: Sequence[str | Path],
    out_dir: str | Path,
    models: str | Path | None = None,
    model_tag: str | None = None,
) -> dict[str, int]:
    """Convert DeepEval test runs to the input contract in ``out_dir``.

    Returns the number of rows written per output file."""
    key = model_tag or "model"
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
        hyper = run.get("hyperparameters") or {}
        cases = [*(run.get("testCases") or []), *(run.get("conversationalTestCases") or [])]
        for case in cases:
            if not isinstance(case, dict):
                raise InputError(f"{path}: not {WHAT}: a test case is not an object")
            metadata = case.get("metadata") or {}
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
            for metric in case.get("metricsData") or []:
                judge = metric.get("evaluationModel")
                if not judge:
                    not_judged[str(metric.get("name"))] += 1
                    continue
                judged = True
                errored += metric.get("score") is None
                dimensions[str(metric.get("name"))] = None
                ratings.append(
                    {
                        "judge": judge, "prompt_id": pid, "model": model,
                        "dimension": metric.get("name"), "label": metric.get("score"),
                        "run_id": run_id, "test_case": case.get("name"),
                        "threshold": metric.get("threshold"), "success": metric.get("success"),
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
            f"evaluation model not imported (code, not a judge): {named}",
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
