from judge_bias.perturbation.marts import perturbation_bias


def model(dbt, session):
    # per judge x bias type x item sums (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_perturbation_item_sums": dbt.ref("int_perturbation_item_sums"),
    }
    return perturbation_bias(relations.__getitem__, config.get, session)
