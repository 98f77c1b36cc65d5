from judge_bias.comparisons.marts import model_win_rates


def model(dbt, session):
    # judge vs human pairwise win rates per model
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "ppi_lambda": dbt.config.get("ppi_lambda"),
        "comparison_power": dbt.config.get("comparison_power"),
        "budget_half_width": dbt.config.get("budget_half_width"),
    }
    relations = {
        "int_win_rate_prompt_sums": dbt.ref("int_win_rate_prompt_sums"),
    }
    return model_win_rates(relations.__getitem__, config.get, session)
