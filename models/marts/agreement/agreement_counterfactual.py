from judge_bias.agreement import counterfactual_from_prompt_sums


def model(dbt, session):
    # per judge x dimension x prompt sums, aggregated in the database
    return counterfactual_from_prompt_sums(dbt.ref("int_agreement_prompt_sums").df())
