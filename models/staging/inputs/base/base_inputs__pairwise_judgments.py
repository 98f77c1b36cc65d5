from judge_bias.inputs.loads import load_model


def model(dbt, session):
    # dbt puts the source in the DAG and passes a config to a Python model only when
    # the model's file names them, so they are written out here; the rest is load_model's
    def source():  # called only on the relation route (var judge_bias_input_relations)
        return dbt.source("judge_bias_inputs", "pairwise_judgments")

    return load_model(
        session,
        "pairwise_judgments",
        source,
        repr(dbt.this) if dbt.is_incremental else None,
        relations=dbt.config.get("input_relations"),
        data_dir=dbt.config.get("data_dir"),
        dialects=dbt.config.get("csv_dialects"),
        loaded_at=dbt.config.get("loaded_at_column"),
        incremental=dbt.config.get("incremental_inputs"),
        load_id=dbt.config.get("load_id"),
    )
