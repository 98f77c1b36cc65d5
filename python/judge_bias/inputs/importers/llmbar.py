"""LLMBar (Zeng et al. 2024, princeton-nlp/LLMBar) dataset.json and judge results.

Inputs: ``dataset.json`` (a list of items: input, output_1, output_2,
label = the gold better output, 1 or 2) and one result file per judge and
prompt strategy, either ``<judge>/<strategy>/result.json`` (the repository's
layout) or ``<judge>__<strategy>__result.json``. A result file holds the same
items in the same order, each with ``results``: a list whose last entry is
``{"swap = False": {...}, "swap = True": {...}}`` (LLMBar's evaluate.py reads
it as ``results[-1]``: Metrics/Reference put their auxiliary ``[text,
finish_reason]`` before it, kept as the extra column ``auxiliary``; Swap puts
its first round before the synthesised one), where ``swap = False``
shows output_1 first, ``swap = True`` output_2 first, and ``winner`` is in
the dataset's numbering ("1" or "2", ``None`` when LLMBar could not parse
the judge's answer).

Each item and order becomes one pairwise_judgments row (both orders share
judge, prompt and run_id, so the warehouse pairs them up):

- prompt_id = ``<dataset folder>-<0-based item index>``; the generators are
  not given, so the two outputs are the models ``output_1`` and
  ``output_2`` (each its own family);
- swap = False: model_first = output_1; swap = True: model_first = output_2;
  verdict = the slot of the winner; for a Rating strategy (score_1 and
  score_2 given) the slot of the output scored higher, ``tie`` on equal
  scores, ``None`` (rejected) when a score is not an integer: no order is
  shown to a Rating judge, LLMBar derives its winners from the scores;
  human_verdict = the slot of ``label`` (LLMBar's gold label, as the human
  verdict);
- judge = the file's judge name, run_id = the prompt strategy (Vanilla, ...);
  extra columns: swap, winner (as given), judge_output (the judge's text),
  score_1 and score_2 (the Rating strategies' score of each output, the
  first element of LLMBar's ``[score, finish_reason]``; empty for the
  comparison strategies, whose results hold none).

Several subsets import together (Natural, Adversarial/Neighbor, GPTInst,
GPTOut, Manual: one dataset.json each): a result file answers the
dataset.json in a folder above it, and prompt ids carry the
subset's folder name (``Neighbor-0``), so subsets never share a prompt.

A ``None`` winner is written as the verdict ``None`` and rejected by the
build (invalid_value); the importer says how many. An item without both
orders, or a result file whose items do not match dataset.json, is an error.
``models.csv``: judges by prefix (GPT-4, ChatGPT GPT; LLaMA2 Llama; PaLM2
Google; Falcon Falcon). ``prompts.csv`` and ``completions.csv`` carry the
texts; ``judge_ratings.csv`` has its header only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import read_json_list, report_unmapped, write_models
from judge_bias.inputs.writer import csv_text, write_contract_file

ORDERS = (("swap = False", ("output_1", "output_2")), ("swap = True", ("output_2", "output_1")))
SLOT = {0: "first", 1: "second"}
PAIRWISE_EXTRAS = ("swap", "winner", "judge_output", "score_1", "score_2", "auxiliary")
DATASET = "dataset.json"
_FLAT_NAME = re.compile(r"^(?P<judge>.+?)__(?P<strategy>.+?)__result$")


def judge_and_strategy(path: Path) -> tuple[str, str]:
    """(judge, prompt strategy) named by a result file's path."""
    match = _FLAT_NAME.match(path.stem)
    if match:
        return match["judge"], match["strategy"]
    if path.name == "result.json" and path.parent.parent.name:
        return path.parent.parent.name, path.parent.name
    raise InputError(
        f"{path}: expected <judge>/<strategy>/result.json or <judge>__<strategy>__result.json"
    )


def _slot(order: tuple[str, str], output: str) -> str | None:
    return SLOT[order.index(output)] if output in order else None


def _score(value: object) -> object:
    """A Rating strategy's score of one output: LLMBar stores ``[score, finish_reason]``."""
    return value[0] if isinstance(value, list) and value else value


def verdict_entry(results: object) -> tuple[dict | None, str]:
    """The entry holding the verdicts, and the auxiliary texts before it.

    LLMBar's evaluate.py appends the auxiliary outputs (Metrics, Reference: each
    ``[text, finish_reason]``) and, for Swap, the first round's orders before the
    verdict dict, and reads the verdict from ``results[-1]``; so does this."""
    if not isinstance(results, list) or not results:
        return None, ""
    entry = results[-1]
    if not isinstance(entry, dict) or not all(k in entry for k, _ in ORDERS):
        return None, ""
    texts = [r[0] for r in results[:-1] if isinstance(r, list) and r]
    return entry, "\n\n".join(csv_text(t) for t in texts)


def _integer(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def rating_verdict(score_1: object, score_2: object, order: tuple[str, str]) -> str | None:
    """A Rating strategy's verdict in the slots of ``order``: the output scored higher,
    ``tie`` on equal scores, None when a score is not an integer (LLMBar reads both
    with ``int``). LLMBar's own winners put a tie in the second slot of both orders and
    an unparsed score in the first: no order is shown to a Rating judge."""
    scores = {"output_1": _integer(score_1), "output_2": _integer(score_2)}
    first, second = scores[order[0]], scores[order[1]]
    if first is None or second is None:
        return None
    return "tie" if first == second else SLOT[0] if first > second else SLOT[1]


def result_rows(
    path: Path, dataset: list[dict], subset: str
) -> tuple[list[dict[str, object]], int]:
    """Both orders of every item of one result file, and how many verdicts are not
    "1" or "2" or a Rating score is not an integer (written as given: None)."""
    judge, strategy = judge_and_strategy(path)
    items = read_json_list(path, "LLMBar results")
    if len(items) != len(dataset):
        raise InputError(f"{path}: {len(items)} items, dataset.json has {len(dataset)}")
    rows: list[dict[str, object]] = []
    unparsed = 0
    for index, (item, gold) in enumerate(zip(items, dataset, strict=True)):
        if item.get("input") != gold.get("input"):
            raise InputError(f"{path}: item {index} is not dataset.json's item {index}")
        entry, auxiliary = verdict_entry(item.get("results"))
        if entry is None:
            raise InputError(
                f"{path}: item {index}: the last entry of results is not a dict holding "
                "both orders ('swap = False' and 'swap = True')"
            )
        label = csv_text(gold.get("label")).strip()
        scores = {k: _score(entry.get(k)) for k in ("score_1", "score_2")}
        rating = "score_1" in entry and "score_2" in entry
        for key, order in ORDERS:
            result = entry[key]
            winner = result.get("winner")
            if rating:
                verdict = rating_verdict(scores["score_1"], scores["score_2"], order)
            else:
                verdict = _slot(order, f"output_{csv_text(winner).strip()}")
            unparsed += verdict is None
            completion = result.get("completion")
            rows.append(
                {
                    "judge": judge,
                    "prompt_id": f"{subset}-{index}",
                    "model_first": order[0],
                    "model_second": order[1],
                    "verdict": verdict or ("None" if winner is None or rating else winner),
                    "human_verdict": _slot(order, f"output_{label}") or label,
                    "run_id": strategy,
                    "swap": key == "swap = True",
                    "winner": winner,
                    "judge_output": completion[0] if isinstance(completion, list) else completion,
                    **scores,
                    "auxiliary": auxiliary,
                }
            )
    return rows, unparsed


def subset_name(dataset_path: Path) -> str:
    """A subset's name: the folder of its dataset.json (Natural, Neighbor, GPTInst...)."""
    return dataset_path.resolve().parent.name or "llmbar"


def dataset_of(result: Path, datasets: list[Path]) -> Path:
    """The dataset.json a result file answers: the only one given, else the one in
    a folder above it (``<subset>/dataset.json`` beside
    ``<subset>/evaluators/<judge>/<strategy>/result.json`` or a flat result file)."""
    if len(datasets) == 1:
        return datasets[0]
    above = [d for d in datasets if result.resolve().is_relative_to(d.resolve().parent)]
    if len(above) != 1:
        raise InputError(
            f"{result}: several dataset.json given and {len(above) or 'none'} in a folder "
            "above this file; import each subset on its own or keep the repository's layout"
        )
    return above[0]


def import_llmbar(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert LLMBar's dataset.json and result files to the input contract in
    ``out_dir``. Returns the number of rows written per output file."""
    paths = [Path(f) for f in files]
    datasets = {p: read_json_list(p, "LLMBar dataset.json") for p in paths if p.name == DATASET}
    if not datasets:
        raise InputError("llmbar: give the dataset.json of the result files' subset")
    subsets = {p: subset_name(p) for p in datasets}
    if len(set(subsets.values())) != len(subsets):
        raise InputError(f"llmbar: two dataset.json files in folders of one name: {list(datasets)}")
    rows: list[dict[str, object]] = []
    for path in paths:
        if path.name == DATASET:
            continue
        dataset_path = dataset_of(path, list(datasets))
        file_rows, unparsed = result_rows(path, datasets[dataset_path], subsets[dataset_path])
        report_unmapped(
            path.name,
            unparsed,
            "verdict(s) LLMBar could not parse or Rating score(s) not an integer (None)",
        )
        rows += file_rows
    prompts = [
        {"prompt_id": f"{subset}-{i}", "dataset": subset, "prompt_text": item.get("input")}
        for path, subset in subsets.items()
        for i, item in enumerate(datasets[path])
    ]
    completions = [
        {"prompt_id": f"{subset}-{i}", "model": out, "completion_text": item.get(out)}
        for path, subset in subsets.items()
        for i, item in enumerate(datasets[path])
        for out in ("output_1", "output_2")
    ]
    judges = [str(r["judge"]) for r in rows]
    out = Path(out_dir)
    return {
        "pairwise_judgments": write_contract_file(out, "pairwise_judgments", rows, PAIRWISE_EXTRAS),
        "prompts": write_contract_file(out, "prompts", prompts),
        "completions": write_contract_file(out, "completions", completions),
        "models": write_models(out, [*judges, "output_1", "output_2"], None, models),
        "judge_ratings": write_contract_file(out, "judge_ratings", []),
    }
