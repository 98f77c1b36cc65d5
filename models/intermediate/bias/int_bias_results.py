from judge_bias.analyses import FACT_COLUMNS, results_long, run_analyses, settings_from_config


def model(dbt, session):
    # dbt passes only the config keys it sees as literal dbt.config.get calls
    config = {
        "se_type": dbt.config.get("se_type"),
        "ci_level": dbt.config.get("ci_level"),
        "weakest_k": dbt.config.get("weakest_k"),
        "weakest_models": dbt.config.get("weakest_models"),
        "task_groups": dbt.config.get("task_groups"),
    }
    fct = dbt.ref("fct_judge_ratings").select(", ".join(FACT_COLUMNS)).df()
    # every analysis of the registry, fitted once: bias_estimates and bias_fits split it
    estimates, fits = run_analyses(fct, settings_from_config(config.get))
    return results_long(estimates, fits)
