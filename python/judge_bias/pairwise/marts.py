"""The pairwise marts as the dbt model files call them: ``ref(name)`` gives a parent
relation, ``get(key)`` a config value; each reads its aggregates within the memory
budget (over it: the keys with a note, never a kill) and calls ``sums``."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.limits import Budget, within_budget
from judge_bias.pairwise.columns import JOINT_COLUMNS, PERPLEXITY_BIN_COLUMNS, WITH_HUMAN_COLUMNS
from judge_bias.pairwise.sums import (
    LOGIT_CELL_BYTES,
    PERPLEXITY_CELL_BYTES,
    joint_bias_from_cells,
    pairwise_bias_from_aggregates,
    perplexity_bins_from_cells,
)
from judge_bias.warehouse.frames import to_pandas

Ref = Callable[[str], object]
Get = Callable[[str], object]


def pairwise_bias(ref: Ref, get: Get, session: object = None) -> pd.DataFrame:
    """pairwise_bias from int_pairwise_prompt_sums, int_pairwise_kappa_counts and
    int_pairwise_logit_cells (the largest, so the one the budget is checked on); rows
    kept as `invalid` count in invalid_rate and the *_invalid_* consistencies."""
    budget = Budget.from_dbt(get)
    sums, kappa = ref("int_pairwise_prompt_sums"), ref("int_pairwise_kappa_counts")
    return within_budget(
        ref("int_pairwise_logit_cells"), budget, "pairwise logit cells", LOGIT_CELL_BYTES,
        lambda cells: pairwise_bias_from_aggregates(to_pandas(sums), cells, to_pandas(kappa)),
        "judge, 'all' as opponent", WITH_HUMAN_COLUMNS, keys_relation=sums,
    )  # fmt: skip


def pairwise_joint_bias(ref: Ref, get: Get, session: object = None) -> pd.DataFrame:
    """pairwise_joint_bias from int_pairwise_logit_cells, with pairwise_bias's pooled
    self-preference rate and length slope beside each judge's joint fit."""
    budget = Budget.from_dbt(get)
    marginal = to_pandas(ref("pairwise_bias"))
    marginal = marginal.loc[
        marginal["opponent"] == "all", ["judge", "self_preference_rate", "length_slope"]
    ].reset_index(drop=True)
    return within_budget(
        ref("int_pairwise_logit_cells"), budget, "pairwise logit cells", LOGIT_CELL_BYTES,
        lambda cells: joint_bias_from_cells(cells, marginal), "judge", JOINT_COLUMNS,
    )  # fmt: skip


def pairwise_perplexity_bins(ref: Ref, get: Get, session: object = None) -> pd.DataFrame:
    """pairwise_perplexity_bins from int_pairwise_perplexity_cells; over the budget,
    no bins (pairwise_bias.notes says why)."""
    budget = Budget.from_dbt(get)
    return within_budget(
        ref("int_pairwise_perplexity_cells"), budget, "pairwise perplexity cells",
        PERPLEXITY_CELL_BYTES, perplexity_bins_from_cells, "judge", PERPLEXITY_BIN_COLUMNS,
    ).dropna(subset=["bin"])  # fmt: skip
