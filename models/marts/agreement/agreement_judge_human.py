from judge_bias.agreement import judge_human_agreement


def model(dbt, session):
    columns = "judge, dimension, framing, judge_score_norm, human_score_norm"
    return judge_human_agreement(dbt.ref("fct_judge_ratings").select(columns).df())
