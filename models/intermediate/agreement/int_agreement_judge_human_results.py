from judge_bias.agreement.marts import agreement_judge_human


def model(dbt, session):
    # distinct score pairs per prompt with counts (SQL; the rows without a human
    # score are left out by judge_human_sums)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_agreement_binary_ratings": dbt.ref("int_agreement_binary_ratings"),
    }
    return agreement_judge_human(relations.__getitem__, config.get, session)
