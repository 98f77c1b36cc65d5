from judge_bias.ppi.pairs import unit_pair_sums


def model(dbt, session):
    # the units of one prompt paired by a dense product per judge (numpy), where a
    # SQL self-join hashed ~64M pairs at 10M ratings (python/judge_bias/ppi/pairs.py)
    units = dbt.ref("int_ppi_units")
    moments = dbt.ref("int_ppi_stratum_moments")
    return unit_pair_sums(units, moments, session)
