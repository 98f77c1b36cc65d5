"""Self-recognition (Panickssery et al. 2024), ``results/<dataset>/<judge>_results.json``.

The authors' repository (ArjunPanickssery/self_recognition) writes one file
per judge and dataset (``results/xsum/gpt4_results.json``,
``results/cnn/cnn_10_ft_gpt35_results.json``). Each record: ``key`` (article
id), ``model`` (the other author), ``forward_comparison`` (the judge's own
summary shown first: "1" = own, "2" = other), ``backward_comparison`` (the
other summary shown first: "1" = other, "2" = own), ``self_preference``, the
detection fields and, in the CNN files, the chosen answers' probabilities.

- **Judge**: the records do not name it, so the file name does: the last of
  the paper's judges (gpt4, gpt35, llama, claude) in the part before
  ``_results`` is the judge and the author of the "own" summaries
  (``self_recognition_cnn_gpt35_results.json`` -> gpt35). A fine-tuned judge
  (``cnn_10_ft_gpt35``: an ``ft`` before the model, the repository's naming)
  keeps its whole name as the judge, its summaries are its base model's
  (gpt35), as in the authors' code, so its comparisons are same-family, not
  self (``--models`` can map it to gpt35). A name without a known judge is
  the judge as given.
- **Dataset**: from the record's key (CNN/DailyMail ids are 40 hex digits,
  XSUM ids are numbers), else the file's folder or a ``cnn``/``xsum`` part of
  its name, else ``unknown``; prompts.csv lists the articles with it.

Each record becomes two pairwise rows with the same run_id, so that the
warehouse pairs the two orders up:

- forward:  model_first = own,   model_second = other, verdict = forward_comparison
- backward: model_first = other, model_second = own,   verdict = backward_comparison

A verdict "1" means the first slot and "2" the second, which is how the
warehouse reads them. Any other value (``""``, ``"3"``, a missing field) is
written as given: the build rejects that row with a reason, and the importer
reports how many there were. A file in which no record has either field
(the repository's individual-recognition results, ``target_model`` and
``recognition_score``: one summary per record) is an error, not 2 x n
rejected rows. The record's self_preference, detection and
probability fields are kept as extra columns on both rows, with
``comparison_order`` (forward or backward) and ``record_index`` (0-based
position in the file).

``models.csv`` names each model's family: gpt4 and gpt35 GPT, llama Llama,
claude Claude, human Human, a fine-tune its base model's; any other name by
its prefix (else its own family); ``--models FILE`` on top.
``judge_ratings.csv`` is written with its header only (the one required
file; there are no ratings in this data).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import read_json, write_models
from judge_bias.inputs.writer import csv_text as _text
from judge_bias.inputs.writer import write_rows as _write

FAMILIES = {"gpt4": "GPT", "gpt35": "GPT", "llama": "Llama", "claude": "Claude", "human": "Human"}
JUDGES = ("gpt4", "gpt35", "llama", "claude")  # the paper's judges, as its files name them
DATASETS = ("cnn", "xsum")
EXTRA_FIELDS = (
    "self_preference",
    "forward_detection",
    "backward_detection",
    "detection_score",
    "forward_comparison_probability",
    "backward_comparison_probability",
    "forward_detection_probability",
)
# the source's fields kept beside the contract's (base_inputs__pairwise_judgments)
PAIRWISE_EXTRA = ("comparison_order", "record_index", *EXTRA_FIELDS)
PAIRWISE_HEADER: tuple[str, ...] = (
    "judge",
    "prompt_id",
    "model_first",
    "model_second",
    "verdict",
    "run_id",
)
PAIRWISE_HEADER += PAIRWISE_EXTRA
RUN_ID = "1"
COMPARISON_FIELDS = ("forward_comparison", "backward_comparison")
KNOWN_VERDICTS = ("1", "2")
_FILE_NAME = re.compile(r"^(?P<judge>.+?)_results$")
_CNN_KEY = re.compile(r"^[0-9a-f]{40}$")  # CNN/DailyMail story ids: SHA-1 hex digests
_XSUM_KEY = re.compile(r"^[0-9]+$")  # XSUM (BBC) article ids


def authors_from_file_name(path: str | Path) -> tuple[str, str]:
    """(judge, author of the judge's own summaries) named by ``<...>_results.json``."""
    match = _FILE_NAME.match(Path(path).stem)
    if not match:
        raise InputError(f"{path}: expected a file named <judge>_results.json (e.g. gpt4_results)")
    name = match["judge"]
    tokens = name.split("_")
    known = [i for i, t in enumerate(tokens) if t.lower() in JUDGES]
    if not known:
        return name, name
    i = known[-1]
    base = tokens[i].lower()
    if "ft" in (t.lower() for t in tokens[:i]):  # a fine-tune of the base model
        return "_".join(tokens[: i + 1]), base
    return base, base


def judge_from_file_name(path: str | Path) -> str:
    """The judge named by a file ``<...>_results.json`` (authors_from_file_name)."""
    return authors_from_file_name(path)[0]


def dataset_hint(path: str | Path) -> str:
    """The dataset a file's folder or name gives (``results/cnn/...``), else unknown."""
    path = Path(path)
    if path.parent.name.lower() in DATASETS:
        return path.parent.name.lower()
    words = [t.lower() for t in path.stem.split("_")]
    if "ft" in words:  # cnn_10_ft_gpt35: cnn is the fine-tune's training data
        return "unknown"
    return next((t for t in words if t in DATASETS), "unknown")


def dataset_of(key: str, hint: str) -> str:
    """The dataset of an article id: its form where it tells, else ``hint``."""
    if _CNN_KEY.match(key):
        return "cnn"
    if _XSUM_KEY.match(key):
        return "xsum"
    return hint


def pairwise_rows(path: str | Path) -> tuple[list[list[str]], int]:
    """The two pairwise rows of every record of one file, and how many rows carry a
    verdict other than "1" or "2" (written as given, rejected by the build)."""
    judge, own = authors_from_file_name(path)
    records = read_json(Path(path), "a self-recognition results file")
    if not isinstance(records, list):
        raise InputError(f"{path}: expected a JSON list of records")
    rows: list[list[str]] = []
    unknown = 0
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError(f"{path}: record {index} is not a JSON object")
    if records and not any(f in r for r in records for f in COMPARISON_FIELDS):
        raise InputError(
            f"{path}: no record has forward_comparison or backward_comparison (fields: "
            f"{', '.join(records[0])}); an individual-recognition file (target_model, "
            "recognition_score: one summary per record) holds no pairwise comparison to import; "
            "leave it out of the import (a folder mixing both: give the comparison files alone)"
        )
    for index, record in enumerate(records):
        other = _text(record.get("model"))
        extras = [_text(record.get(f)) for f in EXTRA_FIELDS]
        for order, first, second, field in (
            ("forward", own, other, "forward_comparison"),
            ("backward", other, own, "backward_comparison"),
        ):
            verdict = _text(record.get(field))
            unknown += verdict.strip() not in KNOWN_VERDICTS
            rows.append(
                [
                    judge,
                    _text(record.get("key")),
                    first,
                    second,
                    verdict,
                    RUN_ID,
                    order,
                    str(index),
                    *extras,
                ]
            )
    return rows, unknown


def import_self_recognition(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert self-recognition result files to the input contract in ``out_dir``.

    Returns the number of rows written per output file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[list[str]] = []
    names: list[str] = []
    families = dict(FAMILIES)
    prompts: dict[str, str] = {}
    for file in map(Path, files):
        file_rows, unknown = pairwise_rows(file)
        if unknown:
            print(
                f"{file.name}: {unknown} comparison(s) other than '1' or '2' written as given; "
                "the build rejects those rows (rejected_rows, reason_code missing_value or "
                "invalid_value)",
                file=sys.stderr,
            )
        judge, own = authors_from_file_name(file)
        if own in FAMILIES:
            families.setdefault(judge, FAMILIES[own])
        hint = dataset_hint(file)
        rows += file_rows
        for r in file_rows:
            names += [r[0], r[2], r[3]]
            if r[1].strip():
                prompts.setdefault(r[1], dataset_of(r[1].strip(), hint))
    defaults = {n: (n, families[n]) for n in names if n in families}
    _write(out / "pairwise_judgments.csv", PAIRWISE_HEADER, rows, extra=PAIRWISE_EXTRA)
    n_models = write_models(out, names, defaults, models)
    _write(
        out / "prompts.csv",
        ["prompt_id", "dataset", "task_type"],
        [[p, dataset, "summarization"] for p, dataset in prompts.items()],
    )
    _write(out / "judge_ratings.csv", ["judge", "prompt_id", "model", "dimension", "label"], [])
    return {
        "pairwise_judgments": len(rows),
        "models": n_models,
        "prompts": len(prompts),
        "judge_ratings": 0,
    }
