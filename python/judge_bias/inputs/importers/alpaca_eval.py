"""AlpacaEval annotations (Dubois et al., tatsu-lab/alpaca_eval), ``annotations.json``.

Each file is a JSON list; a record compares ``output_1`` (by ``generator_1``)
with ``output_2`` (by ``generator_2``) on one ``instruction``, judged by
``annotator``. One or many files, any annotator.

- **Slot order**: the annotator saw the outputs under letters;
  ``referenced_models`` maps each letter to ``output_1``/``output_2`` and
  ``m`` is the one shown first (``M`` second). When only one letter is
  present, the other letter is the other output. model_first is the
  generator of the output shown first.
- **Verdict**: ``preference`` is 1 + P(output_2 is better): 1 means output_1
  won, 2 output_2, and the winner's slot is the verdict. 1.5 is a tie (how
  AlpacaEval records an answer it could not parse; its win rate counts it as
  one half). Any other value in (1, 2) (the weighted annotators' logprob
  preferences) gives the verdict of the more likely output. ``p_first``, the
  first slot's share of the preference, is written on every row with a
  preference in [1, 2], so ``pairwise_bias.self_preference_prob`` is the
  AlpacaEval win-rate arithmetic (ties as one half).
- **Not mapped, written as given** (the build rejects them with a reason;
  the importer says how many): a null or out-of-range preference (verdict
  as given, so the reason is the verdict; the generators in the slots shown,
  or in stored order without ``referenced_models``), a record without
  ``referenced_models`` whose preference is not a tie (slot order unknown:
  model_first and model_second left empty, the generators kept in
  generator_1/generator_2). A tie without
  ``referenced_models`` is written in stored order (slot_order ``unknown``):
  a tie with p_first 0.5 is the same in either order.
- **Judge** = the annotator name, resolved through ``models.csv``:
  ``ANNOTATOR_JUDGES`` (AlpacaEval annotator config -> the judge model it
  calls) and ``GENERATOR_MODELS`` (AlpacaEval generator names that are the
  same models) make the judge's own outputs self-judgments; override or
  extend both with ``--models FILE``. Unknown annotators are their own model.
- **prompts**: prompt_id = ``ae-`` + the first 12 hex digits of the SHA-1 of
  the instruction (the same instruction gets the same id in every file),
  dataset = the record's ``dataset``, prompt_text = instruction.
  **completions**: one per prompt x generator with its text (the baseline's
  output, repeated in every file, once). ``judge_ratings.csv`` has its header
  only. Extra pairwise columns: annotator, generator_1, generator_2,
  preference (as given), slot_order, source_file, record_index.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from judge_bias.inputs.importers._write import read_json_list, report_unmapped, write_models
from judge_bias.inputs.writer import csv_text, write_contract_file

# AlpacaEval annotator configs -> (judge model, family) (alpaca_eval's
# evaluators_configs/<name>/configs.yaml: model_name).
ANNOTATOR_JUDGES: dict[str, tuple[str, str]] = {
    "alpaca_eval_cot_gpt4_turbo_fn": ("gpt-4-1106-preview", "GPT"),
    "alpaca_eval_gpt4_turbo_fn": ("gpt-4-1106-preview", "GPT"),
    "weighted_alpaca_eval_gpt4_turbo": ("gpt-4-1106-preview", "GPT"),
    "alpaca_eval_gpt4": ("gpt-4-0314", "GPT"),
}
# AlpacaEval generator names of the judges' own models.
GENERATOR_MODELS: dict[str, tuple[str, str]] = {
    "gpt4_1106_preview": ("gpt-4-1106-preview", "GPT"),
    "gpt4_0314": ("gpt-4-0314", "GPT"),
}
PAIRWISE_EXTRAS = (
    "annotator",
    "generator_1",
    "generator_2",
    "preference",
    "slot_order",
    "source_file",
    "record_index",
)
TIE = 1.5


def prompt_id(instruction: str) -> str:
    """The id of an instruction, the same in every annotations file."""
    return "ae-" + hashlib.sha1(instruction.encode("utf-8")).hexdigest()[:12]


def shown_first(referenced: object) -> str | None:
    """Which stored output (output_1 or output_2) was shown first, or None."""
    if isinstance(referenced, str):
        try:
            referenced = ast.literal_eval(referenced)
        except (ValueError, SyntaxError):
            return None
    if not isinstance(referenced, dict):
        return None
    outputs = {"output_1", "output_2"}
    if referenced.get("m") in outputs:
        return referenced["m"]
    if referenced.get("M") in outputs:  # only the second letter: m is the other output
        return (outputs - {referenced["M"]}).pop()
    return None


NULL_PREFERENCE = "record(s) with a null or unreadable preference"
NO_ORDER = (
    "decisive record(s) without referenced_models (the slot order shown to the judge, "
    "which AlpacaEval's older annotations, such as annotation_alpaca_eval_gpt4.json, "
    "do not record)"
)


def _preference(value: object) -> float | None:
    try:
        p = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return p if 1.0 <= p <= 2.0 else None


def pairwise_row(record: dict, index: int, source: str) -> tuple[dict[str, object], str | None]:
    """One record as a pairwise_judgments row, and why it was not mapped (None when
    it was: NULL_PREFERENCE or NO_ORDER)."""
    g1, g2 = csv_text(record.get("generator_1")), csv_text(record.get("generator_2"))
    first = shown_first(record.get("referenced_models"))
    p = _preference(record.get("preference"))
    row: dict[str, object] = {
        "judge": record.get("annotator"),
        "prompt_id": prompt_id(csv_text(record.get("instruction"))),
        "annotator": record.get("annotator"),
        "generator_1": g1,
        "generator_2": g2,
        "preference": record.get("preference"),
        "slot_order": f"{first}_first" if first else "unknown",
        "source_file": source,
        "record_index": index,
    }
    if first is None and p == TIE:
        first = "output_1"  # a tie with p_first 0.5 reads the same in either order
    if p is None:
        # no verdict (a null or unreadable preference): what is wrong is the verdict,
        # so the generators are written (in stored order when the slots are unknown)
        # and the build rejects the row for its verdict
        models = (g2, g1) if first == "output_2" else (g1, g2)
        row.update(model_first=models[0], model_second=models[1], verdict=record.get("preference"))
        return row, NULL_PREFERENCE
    if first is None:
        # a decisive preference whose slot order is unknown: written as given, rejected
        models = ("", "")
        row.update(model_first=models[0], model_second=models[1], verdict=record.get("preference"))
        return row, NO_ORDER
    p_output_1 = 2.0 - p  # preference = 1 + P(output_2 better)
    p_first = p_output_1 if first == "output_1" else 1.0 - p_output_1
    verdict = "tie" if p_first == 0.5 else "first" if p_first > 0.5 else "second"
    row.update(
        model_first=g1 if first == "output_1" else g2,
        model_second=g2 if first == "output_1" else g1,
        verdict=verdict,
        p_first=round(p_first, 12),
    )
    return row, None


def import_alpaca_eval(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert AlpacaEval annotations files to the input contract in ``out_dir``.

    Returns the number of rows written per output file."""
    pairwise: list[dict[str, object]] = []
    prompts: dict[str, dict[str, object]] = {}
    completions: dict[tuple[str, str], dict[str, object]] = {}
    names: list[str] = []
    for file in map(Path, files):
        unmapped = Counter[str]()  # the reason of each record written as given
        for index, record in enumerate(read_json_list(file, "AlpacaEval annotations")):
            row, reason = pairwise_row(record, index, file.name)
            if reason:
                unmapped[reason] += 1
            pairwise.append(row)
            pid = str(row["prompt_id"])
            prompts.setdefault(
                pid,
                {
                    "prompt_id": pid,
                    "dataset": record.get("dataset"),
                    "prompt_text": record.get("instruction"),
                },
            )
            for k in ("1", "2"):
                generator = csv_text(record.get(f"generator_{k}"))
                completions.setdefault(
                    (pid, generator),
                    {
                        "prompt_id": pid,
                        "model": generator,
                        "completion_text": record.get(f"output_{k}"),
                    },
                )
                names.append(generator)
            names.append(csv_text(record.get("annotator")))
        for reason in (NULL_PREFERENCE, NO_ORDER):
            report_unmapped(file.name, unmapped[reason], reason)
    out = Path(out_dir)
    return {
        "pairwise_judgments": write_contract_file(
            out, "pairwise_judgments", pairwise, PAIRWISE_EXTRAS
        ),
        "prompts": write_contract_file(out, "prompts", prompts.values()),
        "completions": write_contract_file(out, "completions", completions.values()),
        "models": write_models(out, names, ANNOTATOR_JUDGES | GENERATOR_MODELS, models),
        "judge_ratings": write_contract_file(out, "judge_ratings", []),
    }
