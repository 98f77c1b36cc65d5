from judge_bias.limits import Budget, within_budget
from judge_bias.stats.pairwise import PAIRWISE_ROW_BYTES
from judge_bias.stats.pairwise_human import JOINT_COLUMNS, joint_bias
from judge_bias.warehouse.frames import to_pandas

COLUMNS = (
    "judge, prompt_id, model_first, model_second, run_id, verdict, human_verdict, "
    "length_first, length_second, is_self_first, is_self_second, pair_key"
)


def model(dbt, session):
    budget = Budget.from_config(dbt.config.get("memory_budget"))
    rows = dbt.ref("int_pairwise_checked").filter("reject_code is null").select(COLUMNS)
    marginal = to_pandas(dbt.ref("pairwise_bias"))
    marginal = marginal.loc[
        marginal["opponent"] == "all", ["judge", "self_preference_rate", "length_slope"]
    ].reset_index(drop=True)
    return within_budget(
        rows, budget, "pairwise judgments", PAIRWISE_ROW_BYTES,
        lambda frame: joint_bias(frame, marginal), "judge", JOINT_COLUMNS,
    )  # fmt: skip
