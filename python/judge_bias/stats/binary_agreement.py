"""Binary and graded agreement of a judge with the human reference (agreement_binary).

A rating passes when its normalised score is at least ``pass_threshold`` (0.5 by
default: the upper half of the scale); the human verdict is the mean human score
(normalised) against the same threshold. On the rows with a human score:

- accuracy, sensitivity P(judge pass | human pass), specificity
  P(judge fail | human fail): rates with a prompt-clustered Wilson interval
  (``level_intervals.clustered_wilson``; plain Wilson with one rating per prompt,
  as truescore's ``judge_agreement``);
- Gwet's AC1 on the two pass/fail verdicts (Gwet 2008): (p_o - p_e) / (1 - p_e),
  p_e = 2 pi (1 - pi), pi the mean pass rate of the two raters (two categories are
  fixed, so p_e <= 1/2 and AC1 is always defined); interval: percentile bootstrap
  over prompts;
- quadratic-weighted kappa on the normalised scores (Cohen 1968), in its moment
  form 1 - mean((x - y)^2) / (var(x) + var(y) + (mean x - mean y)^2) (population
  moments): on integer scores whose every level occurs it is exactly the
  contingency-table QWK of sklearn / truescore; it also takes the human mean of
  several annotators. Null, with a note, when both sides are one constant (0/0);
  interval: percentile bootstrap over prompts.

The Rogan-Gladen (1978) corrected pass rate uses every judge rating, labelled or
not: (p_obs + spec - 1) / (sens + spec - 1), p_obs the judge's pass rate, with a
delta-method (linearisation) interval clustered by prompt that keeps the covariance
of p_obs with sens and spec (``binary_cells.rogan_gladen_from_counts``; truescore's
``rogan_gladen_estimate`` treats the three as independent), clipped to [0, 1]; null,
with a note, when sens + spec <= 1 or a human class is empty.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from judge_bias.stats.binary_cells import (
    binary_agreement_from_cells,
    bootstrap_products,
    pooled,
    prompt_cells,
)
from judge_bias.stats.level_intervals import (
    cluster_bootstrap_weights,
)

BINARY_COLUMNS: dict[str, str] = (
    {"judge": "str", "dimension": "str"}
    | dict.fromkeys(("n_judged", "n_labelled", "n_prompts"), "int64")
    | dict.fromkeys(("true_pass", "false_pass", "false_fail", "true_fail"), "int64")
    | dict.fromkeys(("judge_pass_rate", "human_pass_rate"), "float64")
    | {
        f"{m}{s}": "float64"
        for m in ("accuracy", "sensitivity", "specificity", "gwet_ac1", "qwk", "rg_pass_rate")
        for s in ("", "_ci_low", "_ci_high")
    }
    | {"pass_threshold": "float64", "ci_level": "float64", "notes": "str"}
)


def agreement_binary_mart(
    ratings: Any,
    *,
    pass_threshold: float = 0.5,
    level: float = 0.90,
    n_boot: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per judge x dimension (and `all` where a judge has several) from
    rows judge, dimension, prompt_id, judge_score_norm, human_score_norm (null when
    unlabelled) and n_rows (the ratings carrying those values): a DuckDB relation
    (summed per prompt in DuckDB, ``binary_cells.prompt_cells``), or a pandas or
    Spark frame. Each group's statistics from its per-prompt sums
    (``binary_cells.binary_agreement_from_cells``; tested equal to the rating-level
    reference ``tests/agreement_reference.binary_agreement``)."""
    groups, cells = prompt_cells(ratings, pass_threshold)
    if groups.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in BINARY_COLUMNS.items()})
    judges = groups["judge"].to_numpy(dtype=object)
    dimensions = groups["dimension"].to_numpy(dtype=object)
    bounds = np.searchsorted(cells["key"], np.arange(len(groups) + 1))
    rows_of = [np.arange(bounds[k], bounds[k + 1]) for k in range(len(groups))]
    # (judge, dimension, the cells' rows): each group, and `all` (every dimension of
    # a judge with several) summed per prompt; a dimension named `all` joins the
    # pooled group, as it did when the groups were a group-by of the rows
    parts: dict[tuple[str, str], list[np.ndarray]] = {}
    for k in range(len(groups)):
        parts.setdefault((judges[k], dimensions[k]), []).append(rows_of[k])
    for judge in dict.fromkeys(judges):
        mine = [k for k in range(len(groups)) if judges[k] == judge]
        if len({dimensions[k] for k in mine}) > 1:
            parts.setdefault((judge, "all"), []).extend(rows_of[k] for k in mine)
    keys = sorted(parts)
    group_cells = [pooled(cells, np.concatenate(parts[key])) for key in keys]
    # The B x G resample counts depend only on G (and n_boot, seed): judges that rate
    # the same prompts share them. Drawn once per G, not once per judge x dimension
    # (at 10M ratings each draw is 500 x 139k multinomial counts, ~8 s and 0.5 GB):
    # bootstrap_products takes the groups in order of their labelled prompts' count,
    # one draw kept at a time, and multiplies each draw with every group of its G at
    # once; the same draws, so the same intervals.
    boot_counts = functools.lru_cache(maxsize=1)(cluster_bootstrap_weights)
    products = bootstrap_products(group_cells, n_boot, seed, boot_counts)
    out: list[dict[str, object]] = []
    for (judge, dimension), cells_, boot in zip(keys, group_cells, products, strict=True):
        stats_row = binary_agreement_from_cells(
            cells_,
            pass_threshold=pass_threshold,
            level=level,
            n_boot=n_boot,
            seed=seed,
            boot_counts=boot_counts,
            boot=boot,
        )
        out.append({"judge": judge, "dimension": dimension, **stats_row})
    frame = pd.DataFrame(out)
    frame["pass_threshold"] = pass_threshold
    frame["ci_level"] = level
    return frame[list(BINARY_COLUMNS)].astype(
        {c: t for c, t in BINARY_COLUMNS.items() if t == "float64"}
    )
