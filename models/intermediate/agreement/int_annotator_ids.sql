-- The annotators of each dimension: the distinct annotator_id of the accepted
-- per-annotator labels (not expert, not pre-aggregated) with a score.
-- agreement_annotators counts them per dimension and over all dimensions.
with

labels as (
    select
        dimension,
        annotator_id
    from {{ ref('int_human_annotations_checked') }}
    where
        reject_code is null
        and not coalesce(role = 'expert', false)
        and coalesce(n_aggregated, 1) <= 1
        and human_score is not null
),

final as (
    select distinct
        dimension,
        annotator_id
    from labels
)

select * from final
