from judge_bias.agreement.counterfactual import counterfactual_from_prompt_sums
from judge_bias.limits import Budget
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # per judge x dimension x prompt sums, aggregated in the database; the bootstrap
    # draws its replicates in batches within the memory budget
    budget = Budget.from_config(dbt.config.get("memory_budget"))
    sums = to_pandas(dbt.ref("int_agreement_prompt_sums"))
    return counterfactual_from_prompt_sums(sums, budget=budget)
