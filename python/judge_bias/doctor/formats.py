"""The formats the doctor recognises, each by a signature on the sampled records,
with the importer (or mapping config) that reads it and what it is known to hold.

A new importer adds one ``Format`` here (its name as in IMPORTERS); a format whose
importer is not installed in this checkout is still named, with the fallback.
``holds`` states what the format holds whatever its columns look like (a
self-recognition file's judge is in its name, not in a column).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from judge_bias.doctor.sample import Sample
from judge_bias.inputs.contract import KINDS


def _keys(sample: Sample) -> set[str]:
    return set().union(*(set(r) for r in sample.records[:50])) if sample.records else set()


def _has(*names: str) -> Callable[[Sample], bool]:
    return lambda s: set(names) <= _keys(s)


def _any_of(*groups: tuple[str, ...]) -> Callable[[Sample], bool]:
    return lambda s: any(set(g) <= _keys(s) for g in groups)


@dataclass(frozen=True)
class Format:
    """A known format: how to recognise it and how to read it."""

    name: str
    detect: Callable[[Sample], bool]
    title: str
    importer: str | None = None  # its name in IMPORTERS
    config: str | None = None  # a ready mapping config (docs/mapping/...)
    holds: dict[str, bool] = field(default_factory=dict)
    note: str = ""
    # what the records hold that no column says (a long file's row types)
    holds_of: Callable[[Sample], dict[str, bool]] | None = None


def _contract(sample: Sample) -> bool:
    stem = sample.path.name.split(".")[0]
    return stem in KINDS and set(KINDS[stem].required) <= _keys(sample)


def _contract_holds(sample: Sample) -> dict[str, bool]:
    """A contract file holds its kind's data, whatever its column names suggest
    (judge_ratings' ``label`` is the judge's, not a human's)."""
    kind = sample.path.name.split(".")[0]
    keys = _keys(sample)
    return {
        "judge_scores": kind == "judge_ratings",
        "human": kind == "human_annotations" or "human_verdict" in keys,
        "pairwise": kind == "pairwise_judgments",
        "human_verdict": kind == "pairwise_judgments" and "human_verdict" in keys,
        "perturbation": kind == "perturbation_judgments",
        "annotators": kind == "human_annotations",
    }


def _promptfoo(sample: Sample) -> bool:
    keys = _keys(sample)
    return sample.records_path.endswith("results") and bool(
        {"gradingResult", "response", "testCase"} & keys
    )


def _langsmith_holds(sample: Sample) -> dict[str, bool]:
    sources = {str((r.get("feedback_source") or {}).get("type")) for r in sample.records}
    return {"judge_scores": "model" in sources, "human": bool({"app", "api"} & sources)}


def _langfuse(sample: Sample) -> bool:
    keys = _keys(sample)
    return (
        {"traceId", "dataType", "source"} <= keys
        or {"trace_id", "data_type", "source"} <= keys
        or {"subject", "dataType", "source", "value"} <= keys  # v3 pages
    )


def _langfuse_tables(sample: Sample) -> bool:
    """The UI's observations or traces table export (names the scores' models)."""
    keys = _keys(sample)
    return {"id", "traceId", "type", "startTime"} <= keys or (
        {"id", "timestamp", "name"} <= keys and bool({"observationCount", "htmlPath"} & keys)
    )


def _langsmith_experiment(sample: Sample) -> bool:
    """LangSmith's evaluate().to_pandas() as CSV: feedback.<evaluator> columns."""
    keys = _keys(sample)
    return "example_id" in keys and any(str(k).startswith("feedback.") for k in keys)


def _mlflow2_table(sample: Sample) -> bool:
    """MLflow 2's eval_results_table.json: ``<metric>/<version>/score`` columns."""
    return any(k.count("/") == 2 and k.endswith("/score") for k in _keys(sample))


FORMATS: tuple[Format, ...] = (
    Format(
        "contract",
        _contract,
        "an input contract file (README: Input contract)",
        note="put it in a folder with the other contract files and build that folder",
        holds_of=_contract_holds,
    ),
    Format(
        "play-favorites",
        _has("judge", "model", "gt", "dataset", "prompt_id", "rating"),
        "Play Favorites per-dimension CSV",
        "play-favorites",
        holds={"judge_scores": True, "human": True, "annotators": False},
    ),
    Format(
        "hibayes",
        _any_of(("score", "grader", "LLM"), ("LLM_1", "LLM_2", "grader", "first_is_chosen")),
        "HiBayes long CSV",
        "hibayes",
    ),
    Format(
        "self-recognition",
        _has("key", "model", "forward_comparison", "backward_comparison"),
        "self-recognition pairwise results (judge in the file name)",
        "self-recognition",
        holds={
            "pairwise": True,
            "both_orders": True,
            "self": True,
            "human": False,
            "judge_scores": False,
        },
    ),
    Format(
        "alpaca-eval",
        _has("instruction", "output_1", "generator_1", "preference"),
        "AlpacaEval annotations",
        "alpaca-eval",
        holds={"pairwise": True, "human": False, "judge_scores": False},
    ),
    Format(
        "llmbar-results",
        _has("input", "output_1", "output_2", "results"),
        "LLMBar judge result file (give it with dataset.json)",
        "llmbar",
        holds={"pairwise": True, "both_orders": True, "judge_scores": False, "self": False},
    ),
    Format(
        "llmbar-dataset",
        _has("input", "output_1", "output_2", "label"),
        "LLMBar dataset.json (the gold labels; give it with the judges' result files)",
        "llmbar",
        holds={
            "pairwise": True,
            "human_verdict": True,
            "both_orders": True,
            "judge_scores": False,
            "self": False,
        },
    ),
    Format(
        "judge-bench",
        lambda s: s.records_path == "instances" and "annotations" in s.top_keys,
        "JUDGE-BENCH dataset (human scores only)",
        "judge-bench",
        holds={"human": True, "annotators": True, "judge_scores": False},
    ),
    Format(
        "mt-bench",
        _any_of(
            ("question_id", "model", "judge", "score"),
            ("question_id", "model_1", "model_2", "g1_winner"),
            ("question_id", "model_a", "model_b", "winner"),
        ),
        "MT-Bench judgments (FastChat)",
        "mt-bench",
    ),
    Format(
        "inspect",
        lambda s: (
            s.kind == "zip"
            and "header.json" in s.zip_names
            or {"eval", "samples"} <= set(s.top_keys)
        ),
        "Inspect AI log",
        "inspect",
        holds={"judge_scores": True},
    ),
    Format(
        "promptfoo", _promptfoo, "promptfoo results (promptfoo eval -o results.json)", "promptfoo"
    ),
    Format(
        "deepeval",
        # test_results: evaluate()'s EvaluationResult dumped with model_dump()
        lambda s: (
            "testCases" in s.top_keys or s.records_path.endswith(("testCases", "test_results"))
        ),
        "DeepEval test run (.deepeval/.latest_test_run.json)",
        "deepeval",
    ),
    Format("langfuse", _langfuse, "Langfuse scores export", "langfuse"),
    Format(
        "langfuse-tables",
        _langfuse_tables,
        "Langfuse observations or traces export (the UI's table export or the API's pages)",
        "langfuse",
        holds={"judge_scores": False, "human": False},
        note=(
            "no score records (judge or source) here: give it with the scores export's "
            "files, to name their models"
        ),
    ),
    Format(
        "mlflow",
        _any_of(("trace_id", "assessments"), ("request_id", "assessments")),
        "MLflow search_traces export",
        "mlflow",
    ),
    Format(
        "langsmith-feedback",
        _has("run_id", "key", "feedback_source"),
        "LangSmith feedback export (Client.list_feedback)",
        config="docs/mapping/langsmith_feedback.yml",
        holds_of=_langsmith_holds,
    ),
    Format(
        "langsmith-experiment",
        _langsmith_experiment,
        "LangSmith experiment results (evaluate().to_pandas() as CSV)",
        config="docs/mapping/langsmith_experiment_csv.yml",
        holds={"judge_scores": True},
    ),
    Format(
        "mlflow2-eval-table",
        _mlflow2_table,
        "MLflow 2 mlflow.evaluate() results table (eval_results_table.json)",
        config="docs/mapping/mlflow2_eval_table.yml",
        holds={"judge_scores": True},
    ),
    Format(
        "braintrust",
        _has("span_id", "root_span_id", "scores"),
        "Braintrust experiment export (ExperimentEvent records)",
        config="docs/mapping/braintrust_experiment.yml",
    ),
)


def detect(sample: Sample) -> Format | None:
    """The first known format whose signature the sample matches."""
    return next((f for f in FORMATS if f.detect(sample)), None)
