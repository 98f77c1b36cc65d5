from judge_bias.drift.marts import judge_stability


def model(dbt, session):
    # reruns of a judge on the same item
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "pass_threshold": dbt.config.get("pass_threshold"),
    }
    relations = {
        "int_stability_items": dbt.ref("int_stability_items"),
    }
    return judge_stability(relations.__getitem__, config.get, session)
