from judge_bias.drift.settings import settings_from_config
from judge_bias.drift.versions import judge_drift_mart
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # dbt passes only the config keys it sees as literal calls
    config = {
        "ci_level": dbt.config.get("ci_level"),
        "pass_threshold": dbt.config.get("pass_threshold"),
        "drift_min_shift": dbt.config.get("drift_min_shift"),
        "drift_max_flip_rate": dbt.config.get("drift_max_flip_rate"),
        "n_boot": dbt.config.get("drift_n_boot"),
    }
    items = to_pandas(dbt.ref("int_drift_items"))
    pairs = to_pandas(dbt.ref("int_judge_versions"))
    return judge_drift_mart(items, pairs, settings_from_config(config.get))
