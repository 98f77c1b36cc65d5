from judge_bias.agreement import counterfactual_agreement

SCORED = "framing = 'positive' and judge_score_norm is not null and human_score_norm is not null"
COMPLETION = "judge, prompt_id, model, dimension"


def model(dbt, session):
    # one row per judge x completion (mean over runs), aggregated in the database
    means = dbt.ref("fct_judge_ratings").filter(SCORED).aggregate(
        f"{COMPLETION}, avg(judge_score_norm) as judge_score_norm, "
        "avg(human_score_norm) as human_score_norm",
        COMPLETION,
    )
    return counterfactual_agreement(means.df(), per_completion=True)
