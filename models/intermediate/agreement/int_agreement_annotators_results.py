from judge_bias.agreement.marts import agreement_annotators


def model(dbt, session):
    # value counts per item and score (SQL), never the labels
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_annotator_ids": dbt.ref("int_annotator_ids"),
        "int_dimension_scales": dbt.ref("int_dimension_scales"),
        "int_annotator_label_counts": dbt.ref("int_annotator_label_counts"),
    }
    return agreement_annotators(relations.__getitem__, config.get, session)
