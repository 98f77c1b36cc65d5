-- Mean normalised judge and human scores per judge x model x dimension, and
-- pooled over dimensions (dimension = 'all'). Every framing and run counts
-- (inverted frames are already mapped back); NA labels do not.
with

ratings as (
    select
        judge,
        judge_family,
        model,
        model_family,
        dimension,
        judge_score_norm,
        human_score_norm,
        is_self,
        is_same_family
    from {{ ref('fct_judge_ratings') }}
    where judge_score_norm is not null
),

-- the columns listed (Spark has no `* replace`)
both_grains as (
    select * from ratings
    union all
    select
        judge,
        judge_family,
        model,
        model_family,
        'all' as dimension,
        judge_score_norm,
        human_score_norm,
        is_self,
        is_same_family
    from ratings
),

final as (
    select
        judge,
        any_value(judge_family) as judge_family,
        model,
        any_value(model_family) as model_family,
        dimension,
        avg(judge_score_norm) as mean_judge_score_norm,
        avg(human_score_norm) as mean_human_score_norm,
        avg(judge_score_norm - human_score_norm) as mean_score_gap_norm,
        count(*) as n,
        count(human_score_norm) as n_with_human,
        bool_and(is_self) as is_self,
        bool_and(is_same_family) as is_same_family
    from both_grains
    group by judge, model, dimension
)

select * from final
