from judge_bias.limits import Budget, within_budget
from judge_bias.pairwise.reference.human import WITH_HUMAN_COLUMNS
from judge_bias.pairwise.sums import LOGIT_CELL_BYTES, pairwise_bias_from_aggregates
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # aggregates of the judgments, in SQL: per judge x opponent x prompt sums of every
    # rate, (verdict, human verdict) counts, and the logistic fits' cells (the largest,
    # so the one the memory budget is checked on); rows kept as `invalid` (an
    # unparseable verdict) count in invalid_rate and the *_invalid_* consistencies
    budget = Budget.from_config(dbt.config.get("memory_budget"))
    sums = dbt.ref("int_pairwise_prompt_sums")
    kappa = dbt.ref("int_pairwise_kappa_counts")
    return within_budget(
        dbt.ref("int_pairwise_logit_cells"), budget, "pairwise logit cells", LOGIT_CELL_BYTES,
        lambda cells: pairwise_bias_from_aggregates(to_pandas(sums), cells, to_pandas(kappa)),
        "judge, 'all' as opponent", WITH_HUMAN_COLUMNS, keys_relation=sums,
    )  # fmt: skip
