from judge_bias.limits import Budget, within_budget
from judge_bias.pairwise.reference.human import JOINT_COLUMNS
from judge_bias.pairwise.sums import LOGIT_CELL_BYTES, joint_bias_from_cells
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # the joint logit's cells (per judge x prompt x regressors, aggregated in SQL)
    budget = Budget.from_config(dbt.config.get("memory_budget"))
    marginal = to_pandas(dbt.ref("pairwise_bias"))
    marginal = marginal.loc[
        marginal["opponent"] == "all", ["judge", "self_preference_rate", "length_slope"]
    ].reset_index(drop=True)
    return within_budget(
        dbt.ref("int_pairwise_logit_cells"), budget, "pairwise logit cells", LOGIT_CELL_BYTES,
        lambda cells: joint_bias_from_cells(cells, marginal), "judge", JOINT_COLUMNS,
    )  # fmt: skip
