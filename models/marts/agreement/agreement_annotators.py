from judge_bias.agreement import annotator_agreement_table


def model(dbt, session):
    labels = dbt.ref("int_human_annotations_checked").filter("reject_code is null")
    columns = (
        "prompt_id, model, dimension, annotator_id, role, human_score, n_aggregated, "
        "scale_min, scale_max"
    )
    return annotator_agreement_table(labels.select(columns).df())
