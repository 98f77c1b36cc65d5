from judge_bias.drift.settings import settings_from_config
from judge_bias.stats.binary_agreement import agreement_binary_mart
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # dbt passes only the config keys it sees as literal calls
    config = {
        "ci_level": dbt.config.get("ci_level"),
        "pass_threshold": dbt.config.get("pass_threshold"),
        "n_boot": dbt.config.get("drift_n_boot"),
    }
    settings = settings_from_config(config.get)
    return agreement_binary_mart(
        to_pandas(dbt.ref("int_agreement_binary_ratings")),
        pass_threshold=settings.pass_threshold,
        level=settings.ci_level,
        n_boot=settings.n_boot,
        seed=settings.seed,
    )
