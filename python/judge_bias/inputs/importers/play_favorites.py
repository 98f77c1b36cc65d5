"""Play Favorites (Spiliopoulou et al. 2025) per-dimension CSVs.

Each ``<Dimension>.csv`` holds judge, model, gt, dataset, prompt_id, rating,
pred_length. ``gt`` is already the mean of three annotators: it is copied as
text, unchanged, with ``n_aggregated = 3``. The dimension's scale runs from 0
to the largest value ``gt`` or ``rating`` takes in that file, as in the
authors' normalisation. Provider ids stay as they are: the warehouse maps
them to the paper's names and families through its built-in alias seed.
``prompt_ids.csv`` (prompt_id, prompt), when passed, supplies prompt texts.
``--models FILE`` (alias, model, family) is written as ``models.csv``: its rows
come before the seed's.

``pred_length`` is a property of the completion, but the released files do
not always agree on it (1,023 of 5,312 completions differ between two of
them). The length written is the same whatever the order of the files: the
median of the distinct values the files give, rounded half up to a whole
token; the importer reports how many completions conflicted, with examples.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import read_csv, write_models
from judge_bias.inputs.writer import write_rows as _write

REQUIRED = ("judge", "model", "gt", "dataset", "prompt_id", "rating")
PRE_AGGREGATED_ANNOTATORS = 3


def resolve_lengths(lengths: dict[tuple[str, str], set[str]]) -> dict[tuple[str, str], str]:
    """One length per completion, independent of file order: the value when the
    files agree, else the median of their distinct values rounded half up
    (a value that is not a number is kept as text for the build to reject)."""
    resolved: dict[tuple[str, str], str] = {}
    conflicts: list[str] = []
    for key, values in lengths.items():
        if len(values) == 1:
            resolved[key] = next(iter(values))
            continue
        try:
            numbers = sorted(float(v) for v in values)
        except ValueError:
            resolved[key] = min(values)  # the build rejects it as not a number
        else:
            resolved[key] = str(math.floor(statistics.median(numbers) + 0.5))
        conflicts.append(f"{key[0]}/{key[1]}: {sorted(values)} -> {resolved[key]}")
    if conflicts:
        print(
            f"play-favorites: {len(conflicts)} completions have different pred_length in "
            f"different files; each gets the median of its values, e.g. "
            + "; ".join(sorted(conflicts)[:3]),
            file=sys.stderr,
        )
    return resolved


def import_play_favorites(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert Play Favorites CSVs to the input contract in ``out_dir``; ``models``
    (alias, model, family) is written as ``models.csv``, on top of the built-in
    alias seed. Returns the number of rows written per output file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prompts: dict[str, list[str]] = {}
    prompt_text: dict[str, str] = {}
    lengths: dict[tuple[str, str], set[str]] = {}
    humans: dict[tuple[str, str, str], str] = {}
    ratings: list[list[str]] = []
    scales: dict[str, float] = {}
    for file in map(Path, files):
        header, rows = read_csv(file, "a Play Favorites CSV", strip=False)
        if {"prompt_id", "prompt"} <= set(header) and "rating" not in header:
            prompt_text.update({r["prompt_id"]: r["prompt"] for r in rows})
            continue
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise InputError(f"{file}: not a Play Favorites file, missing column(s) {missing}")
        dimension = file.stem
        top = 0.0
        for r in rows:
            key = (r["prompt_id"], r["model"], dimension)
            if key in humans and humans[key] != r["gt"]:
                raise InputError(f"{file}: two different gt values for {key}")
            humans[key] = r["gt"]
            prompts.setdefault(r["prompt_id"], [r["prompt_id"], r["dataset"]])
            length = r.get("pred_length", "")
            if length:
                lengths.setdefault((r["prompt_id"], r["model"]), set()).add(length)
            ratings.append([r["judge"], r["prompt_id"], r["model"], dimension, r["rating"]])
            for value in (r["gt"], r["rating"]):
                # a bad value reaches the warehouse, which rejects it with a reason
                with contextlib.suppress(ValueError):
                    top = max(top, float(value))
        if not math.isfinite(top) or top <= 0:
            raise InputError(f"{file}: no positive gt or rating value to define the scale")
        scales[dimension] = max(scales.get(dimension, 0.0), top)

    completions = resolve_lengths(lengths)
    _write(
        out / "prompts.csv",
        ["prompt_id", "dataset", "prompt_text"],
        [[pid, ds, prompt_text.get(pid, "")] for pid, ds in prompts.values()],
    )
    _write(
        out / "completions.csv",
        ["prompt_id", "model", "length_tokens"],
        [[p, m, n] for (p, m), n in completions.items()],
    )
    _write(
        out / "human_annotations.csv",
        ["prompt_id", "model", "dimension", "annotator_id", "label", "n_aggregated"],
        [
            [p, m, d, "gt_mean", gt, str(PRE_AGGREGATED_ANNOTATORS)]
            for (p, m, d), gt in humans.items()
        ],
    )
    _write(
        out / "judge_ratings.csv", ["judge", "prompt_id", "model", "dimension", "label"], ratings
    )
    scale_rows = []
    for dimension, top in scales.items():
        if top != int(top):
            raise InputError(f"{dimension}: the largest value {top} is not a whole scale point")
        scale_rows += [[dimension, str(s), str(s), "false"] for s in range(int(top) + 1)]
    _write(out / "rating_scales.csv", ["dimension", "label", "score", "is_na"], scale_rows)
    written = {
        "prompts": len(prompts),
        "completions": len(completions),
        "human_annotations": len(humans),
        "judge_ratings": len(ratings),
        "rating_scales": len(scale_rows),
    }
    if models:  # the user's names on top of the seed; no models.csv otherwise
        written["models"] = write_models(out, [], None, models)
    return written
