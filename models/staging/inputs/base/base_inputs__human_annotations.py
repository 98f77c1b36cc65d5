from judge_bias.inputs.relations import load_kind


def model(dbt, session):
    # called only on the relation route (var judge_bias_input_relations); written out
    # here so that dbt puts the source in the DAG
    def source():
        return dbt.source("judge_bias_inputs", "human_annotations")

    return load_kind(
        session,
        "human_annotations",
        source,
        relations=dbt.config.get("input_relations"),
        data_dir=dbt.config.get("data_dir"),
        dialects=dbt.config.get("csv_dialects"),
    )
