from judge_bias.drift.settings import settings_from_config
from judge_bias.drift.stability import judge_stability_mart
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # dbt passes only the config keys it sees as literal calls
    config = {
        "ci_level": dbt.config.get("ci_level"),
        "pass_threshold": dbt.config.get("pass_threshold"),
    }
    items = to_pandas(dbt.ref("int_stability_items"))
    return judge_stability_mart(items, settings_from_config(config.get))
