from judge_bias.comparisons.marts import win_rates_mart


def model(dbt, session):
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "ppi_lambda": dbt.config.get("ppi_lambda"),
        "comparison_power": dbt.config.get("comparison_power"),
        "budget_half_width": dbt.config.get("budget_half_width"),
    }
    sums = dbt.ref("int_win_rate_prompt_sums")
    return win_rates_mart(sums, config.get)
