from judge_bias.ppi.pairs import unit_pair_sums


def model(dbt, session):
    # the units of one prompt paired by dense products per judge and block of codes
    # (numpy), where a SQL self-join hashed ~64M pairs at 10M ratings
    # (python/judge_bias/ppi/pairs.py); the Spark route builds
    # int_ppi_unit_pair_sums.sql instead (the two are enabled by target, dbt_project.yml)
    units = dbt.ref("int_ppi_units")
    moments = dbt.ref("int_ppi_stratum_moments")
    return unit_pair_sums(units, moments, session, dbt.config.get("memory_budget"))
