"""The bodies of the comparison dbt models (model_comparisons, label_budget): the
relations read within the memory budget, the statistics of ``paired`` and ``budget``,
the columns typed as the YAML documents them."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.comparisons.budget import budget_rows
from judge_bias.comparisons.paired import KEYS, PAIR, differences
from judge_bias.comparisons.settings import settings_from_config

_INTERVALS = ("difference", "std_error", "ci_low", "ci_high", "p_value")
COMPARISON_COLUMNS: dict[str, str] = {
    "judge": "object",
    "is_panel": "bool",
    "dimension": "object",
    "model_a": "object",
    "model_b": "object",
    **{c: "float64" for c in _INTERVALS},
    "p_value_holm": "float64",
    "p_value_bh": "float64",
    "significant": "boolean",
    "significant_holm": "boolean",
    "significant_bh": "boolean",
    "n_tests": "Int64",
    **{f"human_only_{c}": "float64" for c in _INTERVALS},
    **{f"judge_only_{c}": "float64" for c in _INTERVALS},
    "judge_minus_human_gap": "float64",
    "min_detectable_difference": "float64",
    "pairing_variance_ratio": "float64",
    "n_labelled_a": "Int64",
    "n_labelled_b": "Int64",
    "n_units_a": "Int64",
    "n_units_b": "Int64",
    "n_paired_units": "Int64",
    "method": "object",
    "ci_level": "float64",
    "notes": "object",
}
BUDGET_COLUMNS: dict[str, str] = {
    "model": "object",
    "dimension": "object",
    "target_half_width": "float64",
    "labels_needed": "Int64",
    "labels_needed_human_only": "Int64",
    "labels_saved": "Int64",
    "feasible": "boolean",
    "best_half_width": "float64",
    "best_judge": "object",
    "labels_needed_best_judge": "Int64",
    "n_labelled": "Int64",
    "n_units": "Int64",
    "half_width_now": "float64",
    "human_only_half_width_now": "float64",
    "min_detectable_difference": "float64",
    "human_only_min_detectable_difference": "float64",
    "power": "float64",
    "ci_level": "float64",
    "notes": "object",
}
_RATES = ("judge_win_rate", "human_win_rate", "judge_win_rate_with_human", "judge_minus_human")
WIN_RATE_COLUMNS: dict[str, str] = {
    "judge": "object",
    "model": "object",
    "n_judgments": "Int64",
    "n_prompts": "Int64",
    "n_with_human": "Int64",
    **{
        f"{r}{suffix}": "float64"
        for r in _RATES
        for suffix in ("", "_std_error", "_ci_low", "_ci_high")
    },
    "judge_minus_human_p_value": "float64",
    "ci_level": "float64",
    "notes": "object",
}
SUMS_ROW_BYTES = 8 * 80  # 8 values a prompt-sums row
MOMENT_ROW_BYTES = 24 * 80  # as judge_bias.ppi.marts
CROSS_ROW_BYTES = 20 * 80  # 20 values a cross-moments row


def method_name(lam: float | None) -> str:
    tuned = "lambda tuned per model and stratum" if lam is None else f"lambda fixed at {lam:g}"
    return f"stratified PPI++ paired difference ({tuned}), prompt-clustered Wald interval"


def comparisons_mart(
    moments: object, cross: object, config: Callable[[str], object]
) -> pd.DataFrame:
    """model_comparisons from int_ppi_stratum_moments and int_comparison_cross_moments."""
    from judge_bias.limits import Budget, within_budget

    budget = Budget.from_config(config("memory_budget"))
    s = settings_from_config(config)

    def table(m: pd.DataFrame, c: pd.DataFrame) -> pd.DataFrame:
        # no pair at all (pairwise-only data): differences' frame has no difference column
        out = differences(m, c, s.ci_level, s.ppi_lambda, s.power)
        out = out.reindex(columns=list(COMPARISON_COLUMNS))
        # a pair with no estimate names no estimator, as a row the budget skipped
        out["method"] = pd.Series(method_name(s.ppi_lambda), index=out.index).where(
            out["difference"].notna()
        )
        return out.astype(COMPARISON_COLUMNS)

    keys = ", ".join([*KEYS, "model as model_a", "model as model_b"])
    return within_budget(
        moments, budget, "stratum moments", MOMENT_ROW_BYTES,
        lambda m: within_budget(
            cross, budget, "comparison cross moments", CROSS_ROW_BYTES,
            lambda c: table(m, c), keys, COMPARISON_COLUMNS, keys_relation=moments,
        ), keys, COMPARISON_COLUMNS,
    )  # fmt: skip


def budget_mart(moments: object, config: Callable[[str], object]) -> pd.DataFrame:
    """label_budget from int_ppi_stratum_moments."""
    from judge_bias.limits import Budget, within_budget

    budget = Budget.from_config(config("memory_budget"))
    s = settings_from_config(config)

    def table(m: pd.DataFrame) -> pd.DataFrame:
        out = budget_rows(m, s.target_half_width, s.ci_level, s.power)
        out = out.rename(columns={"note": "notes"})
        return out.reindex(columns=list(BUDGET_COLUMNS)).astype(BUDGET_COLUMNS)

    return within_budget(
        moments, budget, "stratum moments", MOMENT_ROW_BYTES, table, "model, dimension",
        BUDGET_COLUMNS,
    )  # fmt: skip


def win_rates_mart(sums: object, config: Callable[[str], object]) -> pd.DataFrame:
    """model_win_rates from int_win_rate_prompt_sums."""
    from judge_bias.comparisons.win_rates import win_rates
    from judge_bias.limits import Budget, within_budget

    budget = Budget.from_config(config("memory_budget"))
    s = settings_from_config(config)

    def table(frame: pd.DataFrame) -> pd.DataFrame:
        out = win_rates(frame, s.ci_level)
        return out.reindex(columns=list(WIN_RATE_COLUMNS)).astype(WIN_RATE_COLUMNS)

    return within_budget(
        sums, budget, "win-rate prompt sums", SUMS_ROW_BYTES, table, "judge, model",
        WIN_RATE_COLUMNS,
    )  # fmt: skip


__all__ = ["PAIR", "budget_mart", "comparisons_mart", "win_rates_mart"]


# The dbt models' entry points: (ref, get, session), the one shape of every model file.
def model_comparisons(ref: Callable[[str], object], get: Callable[[str], object], session=None):
    """The model_comparisons mart's rows (int_model_comparisons_results.py)."""
    return comparisons_mart(
        ref("int_ppi_stratum_moments"), ref("int_comparison_cross_moments"), get
    )


def label_budget(ref: Callable[[str], object], get: Callable[[str], object], session=None):
    """The label_budget mart's rows (int_label_budget_results.py)."""
    return budget_mart(ref("int_ppi_stratum_moments"), get)


def model_win_rates(ref: Callable[[str], object], get: Callable[[str], object], session=None):
    """The model_win_rates mart's rows (int_model_win_rates_results.py)."""
    return win_rates_mart(ref("int_win_rate_prompt_sums"), get)
