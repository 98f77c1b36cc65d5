from judge_bias.self_vs_peer import self_vs_peer_tests


def model(dbt, session):
    columns = "judge, model, prompt_id, dimension, framing, judge_score_norm"
    return self_vs_peer_tests(dbt.ref("fct_judge_ratings").select(columns).df())
