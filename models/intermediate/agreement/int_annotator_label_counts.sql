-- Accepted human labels per item (prompt, model, dimension), role, score and
-- scale: Krippendorff's alpha needs only each item's value counts, and the
-- gold-range accuracy and Spearman each item's label counts per score, so
-- agreement_annotators reads this instead of the labels (issue 17: row-level
-- work in SQL). Labels without a score (NA) keep a row: they count in the notes.
with

labels as (
    select
        dimension,
        prompt_id,
        model,
        coalesce(role = 'expert', false) as is_expert,
        coalesce(n_aggregated, 1) > 1 as is_pre_aggregated,
        human_score,
        scale_min,
        scale_max
    from {{ ref('int_human_annotations_checked') }}
    where reject_code is null
),

final as (
    select
        dimension,
        prompt_id,
        model,
        is_expert,
        is_pre_aggregated,
        human_score,
        scale_min,
        scale_max,
        count(*) as n_labels
    from labels
    group by
        dimension,
        prompt_id,
        model,
        is_expert,
        is_pre_aggregated,
        human_score,
        scale_min,
        scale_max
)

select * from final
