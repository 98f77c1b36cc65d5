from judge_bias.comparisons.marts import model_comparisons


def model(dbt, session):
    # the paired PPI++ difference of two models' mean human scores
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "ppi_lambda": dbt.config.get("ppi_lambda"),
        "comparison_power": dbt.config.get("comparison_power"),
        "budget_half_width": dbt.config.get("budget_half_width"),
    }
    relations = {
        "int_ppi_stratum_moments": dbt.ref("int_ppi_stratum_moments"),
        "int_comparison_cross_moments": dbt.ref("int_comparison_cross_moments"),
    }
    return model_comparisons(relations.__getitem__, config.get, session)
