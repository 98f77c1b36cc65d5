"""The perturbation mart as its dbt model file calls it (``ref(name)``, ``get(key)``)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.limits import Budget, within_budget
from judge_bias.perturbation.calm import (
    PERTURBATION_BIAS_COLUMNS,
    PERTURBATION_SUM_BYTES,
    perturbation_bias_from_sums,
)


def perturbation_bias(
    ref: Callable[[str], object], get: Callable[[str], object], session: object = None
) -> pd.DataFrame:
    """perturbation_bias from the per judge x bias type x item sums
    (int_perturbation_item_sums); the item bootstrap resamples them in batches
    within the memory budget."""
    budget = Budget.from_dbt(get)
    return within_budget(
        ref("int_perturbation_item_sums"), budget, "perturbation item sums",
        PERTURBATION_SUM_BYTES, lambda sums: perturbation_bias_from_sums(sums, budget=budget),
        "judge, bias_type", PERTURBATION_BIAS_COLUMNS,
    )  # fmt: skip
