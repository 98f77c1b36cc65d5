"""Adapters from public evaluation-log formats into the input contract.

Each importer is one module with one ``import_<format>(files, out_dir, models=None)``
function (``models``: the user's alias, model, family CSV, written on top of the
importer's own names; the importers of tools that record the model under test in a
tag also take ``model_tag``, mapping takes ``config``, langfuse ``judges``); its module
docstring documents the mapping (the first line is what ``judge-bias import --list``
prints).

- ``alpaca_eval``: AlpacaEval annotations (``annotations.json``).
- ``deepeval_runs``: DeepEval test runs (``.deepeval/.latest_test_run.json``).
- ``hibayes``: HiBayes long CSVs (ratings or pairwise layouts).
- ``inspect_logs``: Inspect AI evaluation logs (.eval or .json).
- ``judge_bench``: JUDGE-BENCH ``data/<dataset>/*.json``.
- ``langfuse``: Langfuse scores with their traces (API pages, UI exports).
- ``llmbar``: LLMBar ``dataset.json`` and judge results.
- ``mapping``: in-house CSV, JSON lines, JSON or Parquet files mapped by a YAML config.
- ``mapping_config``: the mapping importer's YAML config, read and checked.
- ``mlflow_sources``: where MLflow traces are read from (exports, a sqlite store, a URI).
- ``mlflow_traces``: MLflow 3 trace assessments.
- ``mt_bench``: MT-Bench judgments (FastChat llm_judge ``model_judgment/*.jsonl``).
- ``play_favorites``: Play Favorites per-dimension CSVs.
- ``promptfoo``: promptfoo eval results and exports.
- ``_promptfoo_table``: promptfoo results version 2's test numbering (by its table).
- ``self_recognition``: self-recognition ``results/<dataset>/<judge>_results.json``.
- ``_records``: generic records (CSV, JSON lines, JSON, Parquet) and dotted paths into them.
- ``_write``: what the importers share: the models file and reading JSON records.
- ``_extras``: the optional dependencies (pyproject's extras) an importer requires.
"""

import sys
from collections.abc import Callable

from judge_bias.inputs.importers.alpaca_eval import import_alpaca_eval
from judge_bias.inputs.importers.deepeval_runs import import_deepeval
from judge_bias.inputs.importers.hibayes import import_hibayes
from judge_bias.inputs.importers.inspect_logs import import_inspect
from judge_bias.inputs.importers.judge_bench import import_judge_bench
from judge_bias.inputs.importers.langfuse import import_langfuse
from judge_bias.inputs.importers.llmbar import import_llmbar
from judge_bias.inputs.importers.mapping import import_mapping
from judge_bias.inputs.importers.mlflow_traces import import_mlflow
from judge_bias.inputs.importers.mt_bench import import_mt_bench
from judge_bias.inputs.importers.play_favorites import import_play_favorites
from judge_bias.inputs.importers.promptfoo import import_promptfoo
from judge_bias.inputs.importers.self_recognition import import_self_recognition

IMPORTERS: dict[str, Callable[..., dict[str, int]]] = {
    "alpaca-eval": import_alpaca_eval,
    "deepeval": import_deepeval,
    "hibayes": import_hibayes,
    "inspect": import_inspect,
    "judge-bench": import_judge_bench,
    "langfuse": import_langfuse,
    "llmbar": import_llmbar,
    "mapping": import_mapping,
    "mlflow": import_mlflow,
    "mt-bench": import_mt_bench,
    "play-favorites": import_play_favorites,
    "promptfoo": import_promptfoo,
    "self-recognition": import_self_recognition,
}


def summary_line(importer: Callable[..., object]) -> str:
    """The first line of an importer module's docstring."""
    doc = sys.modules[importer.__module__].__doc__ or ""
    return doc.strip().splitlines()[0].replace("``", "") if doc.strip() else ""


__all__ = [
    "IMPORTERS",
    "import_alpaca_eval",
    "import_deepeval",
    "import_hibayes",
    "import_inspect",
    "import_judge_bench",
    "import_langfuse",
    "import_llmbar",
    "import_mapping",
    "import_mlflow",
    "import_mt_bench",
    "import_play_favorites",
    "import_promptfoo",
    "import_self_recognition",
]
