from judge_bias.agreement import counterfactual_agreement


def model(dbt, session):
    columns = "judge, prompt_id, model, dimension, framing, judge_score_norm, human_score_norm"
    return counterfactual_agreement(dbt.ref("fct_judge_ratings").select(columns).df())
