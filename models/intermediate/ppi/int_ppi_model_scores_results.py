from judge_bias.ppi.marts import ppi_model_scores


def model(dbt, session):
    # per-stratum moments of labels and ratings (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "ppi_lambda": dbt.config.get("ppi_lambda"),
        "ppi_interval": dbt.config.get("ppi_interval"),
    }
    relations = {
        "int_ppi_stratum_moments": dbt.ref("int_ppi_stratum_moments"),
        "int_ppi_stratum_cross_moments": dbt.ref("int_ppi_stratum_cross_moments"),
    }
    return ppi_model_scores(relations.__getitem__, config.get, session)
