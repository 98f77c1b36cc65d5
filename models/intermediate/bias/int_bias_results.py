from judge_bias.bias.dbt import results_from_relations


def model(dbt, session):
    # sufficient statistics of the bias regressions (SQL), the rows for HC3 only
    # dbt passes only the config keys and parents it sees as literal calls
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
    relations = {
        "int_bias_cell_stats": dbt.ref("int_bias_cell_stats"),
        "int_bias_prompt_stats": dbt.ref("int_bias_prompt_stats"),
        "int_bias_ratings": dbt.ref("int_bias_ratings"),
        "int_bias_reference_stats": dbt.ref("int_bias_reference_stats"),
        "int_bias_model_means": dbt.ref("int_bias_model_means"),
        "int_bias_ordinal_counts": dbt.ref("int_bias_ordinal_counts"),
    }
    return results_from_relations(relations.__getitem__, config.get, session)
