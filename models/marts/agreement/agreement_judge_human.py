from judge_bias.agreement.measures import judge_human_agreement
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # distinct score pairs per prompt with counts (int_agreement_judge_human_pairs, SQL):
    # the contingency table, and the per-prompt influence totals of the design effect
    return judge_human_agreement(to_pandas(dbt.ref("int_agreement_judge_human_pairs")))
