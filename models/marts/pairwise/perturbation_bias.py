from judge_bias.perturbation import perturbation_bias

COLUMNS = "judge, item_id, bias_type, condition, run_id, verdict, score, ground_truth"


def model(dbt, session):
    rows = dbt.ref("int_perturbation_checked").filter("reject_code is null")
    return perturbation_bias(rows.select(COLUMNS).df())
