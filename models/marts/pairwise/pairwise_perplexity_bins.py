from judge_bias.pairwise import perplexity_bins

COLUMNS = (
    "judge, prompt_id, model_first, model_second, verdict, human_verdict, "
    "perplexity_first, perplexity_second, is_self_first, is_self_second, pair_key"
)


def model(dbt, session):
    rows = dbt.ref("int_pairwise_checked").filter("reject_code is null")
    return perplexity_bins(rows.select(COLUMNS).df())
