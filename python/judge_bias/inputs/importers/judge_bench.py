"""JUDGE-BENCH (Bavaresco et al. 2024, dmg-illc/JUDGE-BENCH) data/<dataset>/*.json.

A file holds ``dataset`` (a name, often a citation: "Dices (Aroyo, Lora, et
al., ...)"), ``annotations`` (the metrics: ``metric``, ``category``
(``graded``, ``continuous`` or ``categorical``), ``worst``/``best`` for
graded and continuous metrics, ``labels_list`` for categorical ones) and
``instances`` (``id``, ``instance`` = the text judged, a string or an object
of named parts such as user_prompt and response,
``annotations.<metric>.individual_human_scores`` = one score per human, and
aggregates: ``mean_human`` or ``majority_human``). The schema is the
repository's data/README.md and data/example.json.

- **Names**: the dataset is the record's ``dataset`` up to its citation
  (`` (``): "Dices", "ToxicChat", "newsroom". prompt_id =
  ``<dataset>-<id>``; when several files of one import share a dataset name
  (dices_350_expert.json and dices_990.json are both "Dices"), each file's
  ids are ``<dataset>-<file stem>-<id>`` so that they cannot collide.
  prompt_text = the instance (an object's parts as ``name: text``
  paragraphs).
- **human_annotations**: one row per instance x metric x individual score:
  dimension = the metric, label = the score as given, annotator_id =
  ``annotator_<k>`` by the score's 1-based position in the list. JUDGE-BENCH
  gives no annotator ids: position k is not the same person across
  instances, so alpha (which needs only the scores per item) is right,
  per-annotator figures are not meaningful. An instance whose metric has no
  individual scores (ToxicChat gives only ``majority_human``) gets its
  aggregate as one row with annotator_id ``majority_human`` (or
  ``mean_human``); the importer says how many.
- **model**: the generators are not given; every instance is a completion of
  one model ``<dataset>-system`` (family ``unknown``).
- **rating_scales**, with an extra column ``scale_level``: a categorical (or
  nominal) metric lists its ``labels_list`` (``labels`` in older files) with
  score 0, 1, ... in the listed order, level ``nominal``: the codes only
  tell the labels apart, so of the warehouse's figures only nominal ones
  (alpha_nominal, observed agreement, exact-match accuracy) mean anything
  for it; a graded metric has the whole numbers from ``worst`` to ``best``
  (level ``ordinal``); a continuous one the whole numbers between its ends,
  or its two ends when they are not whole (level ``interval``; a score in
  between is on the scale). A metric with none of these is an error.
- **judge_ratings**: JUDGE-BENCH's data files carry no model responses (its
  judges' answers live in separate result files, not read here), so
  ``judge_ratings.csv`` has its header only.
- A score that is null or not on the scale is written as given and rejected
  by the build with a reason; the importer says how many. Aggregates are not
  written where individual scores exist: the warehouse recomputes them.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import read_json, report_unmapped, write_models
from judge_bias.inputs.writer import csv_text, write_contract_file

NOMINAL_CATEGORIES = ("categorical", "nominal")
AGGREGATES = ("majority_human", "mean_human")
SCALE_EXTRAS = ("scale_level",)


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def scale_rows(metric: dict) -> list[dict[str, object]]:
    """The rating_scales rows of one metric from its annotation metadata."""
    name = metric.get("metric")
    labels = metric.get("labels_list", metric.get("labels"))
    category = str(metric.get("category") or "").lower()
    if isinstance(labels, list) and labels and (category in NOMINAL_CATEGORIES or not category):
        return [
            {"dimension": name, "label": lab, "score": i, "scale_level": "nominal"}
            for i, lab in enumerate(labels)
        ]
    ends = [_number(metric.get("worst")), _number(metric.get("best"))]
    if None not in ends and ends[0] != ends[1]:
        low, high = sorted(e for e in ends if e is not None)
        level = "interval" if category == "continuous" else "ordinal"
        if low == int(low) and high == int(high):
            points: list[float] = list(range(int(low), int(high) + 1))
        else:
            points = [low, high]
        return [{"dimension": name, "label": p, "score": p, "scale_level": level} for p in points]
    if isinstance(labels, list) and labels:  # labels under another category name
        return [
            {"dimension": name, "label": lab, "score": i, "scale_level": "nominal"}
            for i, lab in enumerate(labels)
        ]
    raise InputError(f"metric {name!r}: neither worst/best nor labels_list to define its scale")


def _in_range(score: object, ends: tuple[float, float] | None) -> bool:
    """A number between a numeric metric's worst and best (the build accepts it)."""
    if ends is None or isinstance(score, bool) or not isinstance(score, int | float):
        return False
    return min(ends) <= score <= max(ends)


def dataset_name(data: dict, path: Path) -> str:
    """The dataset's name without its citation ("Dices (Aroyo, ...)" -> "Dices")."""
    name = re.split(r"\s+\(", csv_text(data.get("dataset")).strip(), maxsplit=1)[0].strip()
    return name or path.stem


def instance_text(instance: object) -> object:
    """An instance as text: an object's parts as ``name: text`` paragraphs."""
    if isinstance(instance, dict):
        return "\n\n".join(f"{k}: {csv_text(v)}" for k, v in instance.items())
    return instance


def _scale_key(row: dict[str, object]) -> tuple[str, str]:
    return str(row["dimension"]), csv_text(row["label"])


def _read(path: Path) -> dict:
    data = read_json(path, "a JUDGE-BENCH data file")
    if not isinstance(data, dict) or not isinstance(data.get("instances"), list):
        raise InputError(f"{path}: expected a JUDGE-BENCH file with instances")
    return data


def import_judge_bench(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert JUDGE-BENCH data files to the input contract in ``out_dir``.

    Returns the number of rows written per output file."""
    humans: list[dict[str, object]] = []
    prompts: list[dict[str, object]] = []
    scales: list[dict[str, object]] = []
    names: list[str] = []
    loaded = [(path, _read(path)) for path in map(Path, files)]
    shared = Counter(dataset_name(data, path) for path, data in loaded)
    for path, data in loaded:
        dataset = dataset_name(data, path)
        space = f"{dataset}-{path.stem}" if shared[dataset] > 1 else dataset
        model = f"{dataset}-system"
        names.append(model)
        metrics = [m for m in data.get("annotations") or [] if isinstance(m, dict)]
        try:
            file_scales = [row for m in metrics for row in scale_rows(m)]
        except ValueError as exc:
            raise InputError(f"{path}: {exc}") from exc
        # one row per dimension and label: files of one dataset repeat its metrics
        seen = {_scale_key(r) for r in scales}
        scales += [r for r in file_scales if _scale_key(r) not in seen]
        on_scale = {_scale_key(r) for r in file_scales}
        numeric: dict[str, tuple[float, float]] = {}
        for r in file_scales:
            if r["scale_level"] != "nominal":
                d, v = str(r["dimension"]), float(r["score"])  # type: ignore[arg-type]
                low, high = numeric.get(d, (v, v))
                numeric[d] = (min(low, v), max(high, v))
        off_scale = aggregated = 0
        for instance in data["instances"]:
            pid = f"{space}-{csv_text(instance.get('id'))}"
            prompts.append(
                {
                    "prompt_id": pid,
                    "dataset": dataset,
                    "prompt_text": instance_text(instance.get("instance")),
                }
            )
            for metric, annotation in (instance.get("annotations") or {}).items():
                annotation = annotation if isinstance(annotation, dict) else {}
                scores = [
                    (f"annotator_{k}", s)
                    for k, s in enumerate(annotation.get("individual_human_scores") or [], 1)
                ]
                if not scores:
                    scores = [(a, annotation[a]) for a in AGGREGATES if a in annotation][:1]
                    aggregated += bool(scores)
                for annotator, score in scores:
                    off_scale += (metric, csv_text(score)) not in on_scale and not _in_range(
                        score, numeric.get(metric)
                    )
                    humans.append(
                        {
                            "prompt_id": pid,
                            "model": model,
                            "dimension": metric,
                            "annotator_id": annotator,
                            "label": score,
                        }
                    )
        report_unmapped(path.name, off_scale, "human score(s) null or off the scale")
        if aggregated:
            print(
                f"{path.name}: {aggregated} instance metric(s) without individual scores; "
                "their aggregate (majority_human or mean_human) is written as one annotation",
                file=sys.stderr,
            )
    defaults = {n: (n, "unknown") for n in names}
    out = Path(out_dir)
    return {
        "human_annotations": write_contract_file(out, "human_annotations", humans),
        "judge_ratings": write_contract_file(out, "judge_ratings", []),
        "prompts": write_contract_file(out, "prompts", prompts),
        "rating_scales": write_contract_file(out, "rating_scales", scales, SCALE_EXTRAS),
        "models": write_models(out, names, defaults, models),
    }
