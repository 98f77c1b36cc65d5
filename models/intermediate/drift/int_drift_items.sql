-- The ratings judge_drift compares: per judge named in a version pair, one
-- rating per item (dimension x prompt x model x framing), its first run in
-- run_id order (judge_stability measures the reruns), with the human score.
with

ratings as (
    select * from {{ ref('fct_judge_ratings') }}
    where judge_score_norm is not null
),

versions as (
    select * from {{ ref('int_judge_versions') }}
),

version_judges as (
    select judge_before as judge from versions
    union
    select judge_after as judge from versions
),

ranked as (
    select
        ratings.judge,
        ratings.dimension,
        ratings.prompt_id,
        ratings.model,
        ratings.framing,
        ratings.judge_score_norm,
        ratings.human_score_norm,
        row_number() over (
            partition by
                ratings.judge, ratings.dimension, ratings.prompt_id,
                ratings.model, ratings.framing
            order by ratings.run_id
        ) as run_rank
    from ratings
    inner join version_judges
        on ratings.judge = version_judges.judge
),

final as (
    select
        judge,
        dimension,
        prompt_id,
        model,
        framing,
        judge_score_norm,
        human_score_norm
    from ranked
    where run_rank = 1
)

select * from final
