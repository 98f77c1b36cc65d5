"""Hide most human labels, keeping a share of the completions labelled, and record
what the full labels said: the setting of prediction-powered inference (few human
labels, many judge ratings), for the simulator (``judge-bias simulate
--label-share``) and for real data (tests keep 10% of Play Favorites' labels).

A completion (prompt x model) keeps all its annotators' labels or none: a human
annotator labels a completion on every dimension at once. The kept completions
are a uniform random sample of exactly round(share x completions) of them, drawn
from their own random stream, so hiding labels changes nothing else.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from judge_bias.errors import InputError

TRUTH_TERM = "ppi_truth"
TRUTH_PARAMETER = "mean_human_score_norm"


def check_share(share: float) -> float:
    share = float(share)
    if not 0 < share <= 1:
        raise InputError(f"label share must be in (0, 1], not {share!r}")
    return share


def kept_completions(
    completions: Iterable[tuple[str, str]], share: float, seed: int
) -> set[tuple[str, str]]:
    """Exactly round(share x n) of the distinct (prompt_id, model) pairs, at least one."""
    share = check_share(share)
    keys = sorted(set(completions))
    if share == 1 or not keys:
        return set(keys)
    n_keep = max(1, round(share * len(keys)))
    rng = np.random.default_rng(seed)
    return {keys[i] for i in rng.choice(len(keys), size=n_keep, replace=False)}


def keep_labels(annotations: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    """The human_annotations rows of the kept completions; rows with role ``expert``
    (gold labels, not the reference) are kept whatever their completion."""
    keys = list(zip(annotations["prompt_id"], annotations["model"], strict=True))
    kept = kept_completions(keys, share, seed)
    keep = np.fromiter((k in kept for k in keys), dtype=bool, count=len(keys))
    if "role" in annotations:
        keep |= annotations["role"].astype(str).str.lower().eq("expert").to_numpy()
    return annotations[keep]


def full_label_means(
    rows: Sequence[Sequence[object]],
    labels: dict[str, Sequence[str]],
    model_names: dict[str, str],
) -> dict[tuple[str, str], float]:
    """Mean normalised human score per (model, dimension) and (model, ``all``), as the
    warehouse computes it: per completion the mean of its annotators' scores (NA and
    expert labels left out; score i of k labels normalised to (i - 1) / (k - 1)),
    then the mean over completions with at least one such label.

    ``rows``: human_annotations rows [prompt_id, model alias, dimension, annotator_id,
    label, role]; ``labels``: each dimension's labels in score order; ``model_names``:
    alias -> model."""
    per_unit: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for prompt_id, alias, dimension, _ann, label, role in rows:
        levels = labels[str(dimension)]
        if role != "annotator" or label not in levels:
            continue
        score = levels.index(label) / (len(levels) - 1)
        per_unit[(str(prompt_id), model_names[str(alias)], str(dimension))].append(score)
    by_group: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (_prompt, model, dimension), scores in per_unit.items():
        unit = float(np.mean(scores))
        by_group[(model, dimension)].append(unit)
        by_group[(model, "all")].append(unit)
    return {key: float(np.mean(values)) for key, values in sorted(by_group.items())}
