-- Rows the GLMs cannot use, counted per dimension and reason, so that the fits'
-- notes say what was left out (nothing is dropped silently).
with

off_scale as (
    select
        dimension,
        'score not a point of the scale (' || grader_type || ' grader)' as reason,
        count(*) as n
    from {{ ref('int_glm_ratings') }}
    where not on_scale
    group by dimension, grader_type
),

ties as (
    select
        'pairwise' as dimension,
        'tie verdicts (the pairwise model has two outcomes)' as reason,
        count(*) as n
    from {{ ref('int_pairwise_checked') }}
    where reject_code is null and verdict = 'tie'
    having count(*) > 0
),

shown_with_human_tie as (
    select distinct
        prompt_id,
        model_first,
        model_second,
        run_id
    from {{ ref('int_pairwise_checked') }}
    where reject_code is null and human_verdict = 'tie'
),

human_ties as (
    select
        'pairwise' as dimension,
        'tie human verdicts (the pairwise model has two outcomes)' as reason,
        count(*) as n
    from shown_with_human_tie
    having count(*) > 0
),

final as (
    select * from off_scale
    union all
    select * from ties
    union all
    select * from human_ties
)

select * from final
