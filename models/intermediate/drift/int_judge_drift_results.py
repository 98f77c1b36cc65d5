from judge_bias.drift.marts import judge_drift


def model(dbt, session):
    # two versions of a judge on the items both rated
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
        "ci_level": dbt.config.get("ci_level"),
        "pass_threshold": dbt.config.get("pass_threshold"),
        "drift_min_shift": dbt.config.get("drift_min_shift"),
        "drift_max_flip_rate": dbt.config.get("drift_max_flip_rate"),
        "n_boot": dbt.config.get("drift_n_boot"),
    }
    relations = {
        "int_drift_items": dbt.ref("int_drift_items"),
        "int_judge_versions": dbt.ref("int_judge_versions"),
    }
    return judge_drift(relations.__getitem__, config.get, session)
