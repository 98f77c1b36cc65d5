from judge_bias.bias.analyses import (
    GRAIN,
    inputs_from_tables,
    read_statistics,
    results_long,
    run_analyses,
    settings_from_config,
    skipped_analyses,
)
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # dbt passes only the config keys it sees as literal dbt.config.get calls
    config = {
        "se_type": dbt.config.get("se_type"),
        "ci_level": dbt.config.get("ci_level"),
        "weakest_k": dbt.config.get("weakest_k"),
        "weakest_models": dbt.config.get("weakest_models"),
        "task_groups": dbt.config.get("task_groups"),
        "min_term_support": dbt.config.get("min_term_support"),
        "gam_knots": dbt.config.get("gam_knots"),
        "memory_budget": dbt.config.get("memory_budget"),
        "max_fits": dbt.config.get("max_fits"),
        "max_ordinal_params": dbt.config.get("max_ordinal_params"),
    }
    settings = settings_from_config(config.get)
    # the OLS fits read aggregates, never the ratings: per cell (HC0, HC1), per
    # cell and prompt (cluster); HC3 needs each row's leverage and reads the rows
    # (dbt.ref takes literal names only)
    grain = GRAIN[settings.se_type]
    if grain == "cell":
        stats = dbt.ref("int_bias_cell_stats")
    elif grain == "prompt":
        stats = dbt.ref("int_bias_prompt_stats")
    else:
        stats = dbt.ref("int_bias_ratings")
    model_means = to_pandas(dbt.ref("int_bias_model_means"))
    # within the memory budget, or a note for every analysis
    stats, n_left_out, note = read_statistics(stats, grain, model_means, settings, session)
    if note:
        return results_long(*skipped_analyses(note, settings))
    ordinal = to_pandas(dbt.ref("int_bias_ordinal_counts"))
    # the gam fit needs one reference value per statistics row: cell-grain
    # statistics split by reference value (prompt and row grain have it already)
    reference_stats = None
    if grain == "cell":
        reference = dbt.ref("int_bias_reference_stats")
        reference_stats, _, note = read_statistics(
            reference, grain, model_means, settings, session
        )
    inputs = inputs_from_tables(stats, model_means, ordinal, n_left_out, reference_stats)
    if grain == "cell" and note:
        inputs.reference_note = note  # over the budget: the gam fit is skipped with it
    estimates, fits = run_analyses(inputs, settings)
    return results_long(estimates, fits)
