from judge_bias.limits import Budget, within_budget
from judge_bias.agreement.measures import (
    ANNOTATOR_COLUMNS,
    LABEL_COUNT_BYTES,
    annotator_agreement_from_counts,
)
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # value counts per item and score, aggregated in SQL (int_annotator_label_counts):
    # at most one row per label, usually items x score levels; never the labels
    budget = Budget.from_config(dbt.config.get("memory_budget"))
    annotators = to_pandas(dbt.ref("int_annotator_ids"))
    # one row per dimension: the scale's level of measurement picks the headline alpha
    scales = to_pandas(dbt.ref("int_dimension_scales"))
    levels = dict(zip(scales["dimension"], scales["level_of_measurement"], strict=True))
    return within_budget(
        dbt.ref("int_annotator_label_counts"), budget, "human label counts", LABEL_COUNT_BYTES,
        lambda counts: annotator_agreement_from_counts(counts, annotators, levels),
        "dimension", ANNOTATOR_COLUMNS,
    )  # fmt: skip
