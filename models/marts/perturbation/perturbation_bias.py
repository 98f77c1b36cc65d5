from judge_bias.limits import Budget, within_budget
from judge_bias.perturbation.calm import (
    PERTURBATION_BIAS_COLUMNS,
    PERTURBATION_SUM_BYTES,
    perturbation_bias_from_sums,
)


def model(dbt, session):
    # per judge x bias type x item sums, aggregated in SQL (int_perturbation_item_sums);
    # the bootstrap over items resamples them in batches within the memory budget
    budget = Budget.from_config(dbt.config.get("memory_budget"))
    return within_budget(
        dbt.ref("int_perturbation_item_sums"), budget, "perturbation item sums",
        PERTURBATION_SUM_BYTES, lambda sums: perturbation_bias_from_sums(sums, budget=budget),
        "judge, bias_type", PERTURBATION_BIAS_COLUMNS,
    )  # fmt: skip
