"""Deterministic files shaped like the exports the mapping configs in docs/mapping/
read, for the mapping and doctor tests.

- ``langsmith_feedback``: Feedback records as ``Feedback.model_dump(mode="json")``
  writes them (langchain-ai/langsmith-sdk, python/langsmith/schemas.py: Feedback,
  FeedbackSourceBase at commit 017fb358): id, created_at, modified_at, key, run_id,
  trace_id, score, value, comment, correction, feedback_source {type, metadata,
  user_id, user_name}, session_id, comparative_experiment_id, feedback_group_id,
  extra, feedback_config, error, start_time.
- ``braintrust_experiment``: ExperimentEvent records (braintrustdata/braintrust-sdk,
  py/src/braintrust/_generated_types.py: ExperimentEvent): id, _xact_id, created,
  project_id, experiment_id, input, output, expected, error, scores, metadata, tags,
  metrics, context, span_id, span_parents, root_span_id, span_attributes, is_root,
  origin.
- ``inhouse_rows``: an in-house CSV (docs/mapping/inhouse_csv.yml's header).
- ``mlflow2_eval_table``: MLflow 2's ``eval_results_table.json`` artifact, written
  by the call MLflow 2.17.2's ``MlflowClient.log_table`` makes
  (mlflow/tracking/client.py: ``data.to_json(path, orient="split", index=False,
  date_format="iso")``) on the columns its default evaluator assigns
  (mlflow/models/evaluation/default_evaluator.py: the data, ``outputs``,
  ``token_count``, ``<metric>/v1/score``, ``<metric>/v1/justification``); a
  failed genai score is null with "Failed to score model on payload. Error: ..."
  (mlflow/metrics/genai/genai_metric.py).
"""

from __future__ import annotations

import csv
import json
import random
import uuid
from pathlib import Path

MODELS = ("gpt-4o", "claude-3-5-sonnet", "llama-3-70b")


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def langsmith_feedback(path: Path, n_runs: int = 12, seed: int = 1) -> list[dict]:
    """Model feedback (correctness, a bool; helpfulness, 0-1) on every run, a human's
    correctness on two runs in three, one end user's thumbs, one feedback without a
    score (a text value only)."""
    rng = random.Random(seed)
    session = _uuid(rng)
    records = []

    def feedback(run: str, trace: str, key: str, score: object, source: dict) -> dict:
        return {
            "id": _uuid(rng), "created_at": "2025-06-01T12:00:00+00:00",
            "modified_at": "2025-06-01T12:00:00+00:00", "key": key, "run_id": run,
            "trace_id": trace, "score": score, "value": None, "comment": "ok",
            "correction": None, "feedback_source": source, "session_id": session,
            "comparative_experiment_id": None, "feedback_group_id": None,
            "extra": None, "feedback_config": None, "error": None, "start_time": None,
        }  # fmt: skip

    for i in range(n_runs):
        run, trace = _uuid(rng), _uuid(rng)
        evaluator = {"__run": {"run_id": _uuid(rng)}}
        model = {"type": "model", "metadata": evaluator, "user_id": None, "user_name": None}
        correct = rng.random() < 0.7
        records.append(feedback(run, trace, "correctness", correct, model))
        records.append(feedback(run, trace, "helpfulness", round(rng.random(), 2), model))
        if i % 3:
            human = {"type": "app", "metadata": {}, "user_id": _uuid(rng), "user_name": "ana"}
            agree = correct if rng.random() < 0.8 else not correct
            records.append(feedback(run, trace, "correctness", int(agree), human))
        if i == 0:
            user = {"type": "api", "metadata": {}, "user_id": None, "user_name": None}
            records.append(feedback(run, trace, "correctness", 1, user))
        if i == 1:
            no_score = feedback(run, trace, "correctness", None, model)
            no_score["value"] = "looks right"
            records.append(no_score)
    _write_jsonl(path, records)
    return records


def braintrust_experiment(path: Path, n_cases: int = 10, seed: int = 2) -> list[dict]:
    """Root spans with scores (Factuality, Levenshtein; "Human factuality" on every
    other case; one null Factuality) and a child llm span per case."""
    rng = random.Random(seed)
    project, experiment = _uuid(rng), _uuid(rng)
    records = []
    for i in range(n_cases):
        root = _uuid(rng)
        scores: dict[str, float | None] = {
            "Factuality": rng.choice([0.0, 0.4, 0.6, 1.0]),
            "Levenshtein": round(rng.random(), 3),
        }
        if i % 2 == 0:
            scores["Human factuality"] = rng.choice([0.0, 1.0])
        if i == 3:
            scores["Factuality"] = None
        base = {
            "_xact_id": str(1000 + i), "created": "2025-06-01T12:00:00Z",
            "project_id": project, "experiment_id": experiment, "error": None,
            "tags": None, "context": None, "root_span_id": root,
        }  # fmt: skip
        records.append(
            {
                **base, "id": _uuid(rng), "span_id": root, "span_parents": None,
                "is_root": True, "input": {"question": f"q{i}"}, "output": f"a{i}",
                "expected": f"a{i}", "scores": scores, "metadata": {"model": MODELS[i % 3]},
                "metrics": {"start": 1.0, "end": 2.0},
                "span_attributes": {"name": "eval", "type": "eval"},
                "origin": {"object_type": "dataset", "object_id": project, "id": f"rec-{i}",
                           "_xact_id": "1"},
            }
        )  # fmt: skip
        records.append(
            {
                **base, "id": _uuid(rng), "span_id": _uuid(rng), "span_parents": [root],
                "is_root": False, "input": [{"role": "user", "content": f"q{i}"}],
                "output": f"a{i}", "expected": None, "scores": None,
                "metadata": {"model": MODELS[i % 3]}, "metrics": {"tokens": 12},
                "span_attributes": {"name": "Chat Completion", "type": "llm"}, "origin": None,
            }
        )  # fmt: skip
    _write_jsonl(path, records)
    return records


HEADER = ("case_id,question,answer_model,answer,grader,grade,reviewer,review_grade,tokens").split(
    ","
)


def inhouse_rows(path: Path, n_cases: int = 30, seed: int = 3) -> list[dict[str, str]]:
    """Every case answered by one model and graded PASS/FAIL by every judge (the
    models themselves); a reviewer's grade on two cases in three; one grade MAYBE."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_cases):
        model = MODELS[i % 3]
        truth = rng.random() < 0.6
        reviewed = i % 3 != 2
        for judge in MODELS:
            lenient = 0.25 if judge == model else 0.1  # a self-preferring judge
            passed = truth or rng.random() < lenient
            if rng.random() < 0.1:
                passed = not passed
            rows.append(
                {
                    "case_id": f"c{i}", "question": f"question {i}", "answer_model": model,
                    "answer": f"answer {i} " * (1 + i % 4), "grader": judge,
                    "grade": "PASS" if passed else "FAIL",
                    "reviewer": "alice" if reviewed else "",
                    "review_grade": ("PASS" if truth else "FAIL") if reviewed else "",
                    "tokens": str(3 * (1 + i % 4)),
                }
            )  # fmt: skip
    rows[5]["grade"] = "MAYBE"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=HEADER)
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def mlflow2_eval_table(path: Path, n_rows: int = 12, seed: int = 4):
    """question-answering metrics (toxicity, exact_match: no judge) and two genai
    metrics (answer_similarity, faithfulness: 1-5 with a justification); one
    faithfulness call failed. Returns the DataFrame written."""
    import pandas as pd

    rng = random.Random(seed)
    rows = []
    for i in range(n_rows):
        row = {"inputs": f"Question {i}: what is {i} + {i}?", "ground_truth": str(2 * i),
               "outputs": str(2 * i + (i % 3 == 0)), "token_count": 5 + i % 4,
               "toxicity/v1/score": round(rng.random() / 100, 6),
               "exact_match/v1/score": float(i % 3 != 0)}  # fmt: skip
        for metric in ("answer_similarity", "faithfulness"):
            score = rng.randint(1, 5)
            row[f"{metric}/v1/score"] = score
            row[f"{metric}/v1/justification"] = f"{metric} {score}: the answer is close."
        rows.append(row)
    rows[5]["faithfulness/v1/score"] = None
    rows[5]["faithfulness/v1/justification"] = "Failed to score model on payload. Error: rate limit"
    frame = pd.DataFrame(rows)
    frame.to_json(path, orient="split", index=False, date_format="iso")
    return frame
