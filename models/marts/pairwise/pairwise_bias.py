from judge_bias.pairwise import pairwise_bias

COLUMNS = (
    "judge, prompt_id, model_first, model_second, run_id, verdict, p_first, human_verdict, "
    "length_first, length_second, is_self_first, is_self_second, pair_key"
)


def model(dbt, session):
    rows = dbt.ref("int_pairwise_checked").filter("reject_code is null")
    return pairwise_bias(rows.select(COLUMNS).df())
