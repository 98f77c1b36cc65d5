from judge_bias.inputs.loads import as_load, is_on
from judge_bias.inputs.relations import load_kind


def model(dbt, session):
    # called only on the relation route (var judge_bias_input_relations); written out
    # here so that dbt puts the source in the DAG
    def source():
        return dbt.source("judge_bias_inputs", "rating_scales")

    # on an incremental run, the loads so far (a relation's next load starts above them)
    previous = repr(dbt.this) if dbt.is_incremental else None
    rows = load_kind(
        session,
        "rating_scales",
        source,
        relations=dbt.config.get("input_relations"),
        data_dir=dbt.config.get("data_dir"),
        dialects=dbt.config.get("csv_dialects"),
        loaded_at=dbt.config.get("loaded_at_column"),
        previous=previous,
    )
    if not is_on(dbt.config.get("incremental_inputs")):
        return rows
    # one load appended to the previous ones (docs/incremental.md)
    return as_load(
        session,
        rows,
        "rating_scales",
        dbt.config.get("load_id"),
        previous,
        relations=dbt.config.get("input_relations"),
        loaded_at=dbt.config.get("loaded_at_column"),
    )
