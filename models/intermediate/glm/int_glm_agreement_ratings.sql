-- The rows the GLM agreement reads: one on-scale rating per dimension, grader
-- and unit (prompt x model), the first run in run_id order. Krippendorff's alpha
-- (observed, and with the fitted grader effects removed) is over units with each
-- grader once, so this is its grain, not a row per rating (issue 17: the
-- ratings are filtered and deduplicated in SQL, not in pandas).
with

ratings as (
    select
        dimension,
        grader,
        grader_type,
        model,
        prompt_id as item,
        prompt_id || '|' || model as unit,
        score,
        run_id
    from {{ ref('int_glm_ratings') }}
    where on_scale
),

ranked as (
    select
        *,
        row_number() over (
            partition by dimension, grader, unit
            order by run_id
        ) as run_rank
    from ratings
),

final as (
    select
        dimension,
        grader,
        grader_type,
        model,
        item,
        unit,
        score,
        run_id
    from ranked
    where run_rank = 1
)

select * from final
