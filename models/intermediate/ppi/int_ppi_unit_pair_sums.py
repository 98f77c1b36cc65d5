from judge_bias.ppi.pairs import pair_sums_model


def model(dbt, session):
    # the units of one prompt paired by dense products per judge and block of codes
    # (numpy), where a SQL self-join hashed ~64M pairs at 10M ratings
    # (python/judge_bias/ppi/pairs.py); the Spark route builds
    # int_ppi_unit_pair_sums.sql instead (the two are enabled by target, dbt_project.yml)
    config = {"memory_budget": dbt.config.get("memory_budget")}
    relations = {
        "int_ppi_units": dbt.ref("int_ppi_units"),
        "int_ppi_unit_groups": dbt.ref("int_ppi_unit_groups"),
    }
    return pair_sums_model(relations.__getitem__, config.get, session)
