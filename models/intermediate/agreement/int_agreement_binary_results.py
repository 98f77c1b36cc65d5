from judge_bias.drift.marts import agreement_binary


def model(dbt, session):
    # pass/fail and graded agreement with the humans
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "pass_threshold": dbt.config.get("pass_threshold"),
        "n_boot": dbt.config.get("drift_n_boot"),
    }
    relations = {
        "int_agreement_binary_ratings": dbt.ref("int_agreement_binary_ratings"),
    }
    return agreement_binary(relations.__getitem__, config.get, session)
