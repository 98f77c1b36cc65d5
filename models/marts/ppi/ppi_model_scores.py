from judge_bias.ppi.marts import mart


def model(dbt, session):
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "ppi_lambda": dbt.config.get("ppi_lambda"),
        "ppi_interval": dbt.config.get("ppi_interval"),
    }
    moments = dbt.ref("int_ppi_stratum_moments")
    cross = dbt.ref("int_ppi_stratum_cross_moments")
    return mart("scores", moments, config.get, cross)
