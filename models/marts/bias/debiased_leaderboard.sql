-- Per judge, each model's mean score and rank before and after debiasing,
-- with the human mean and rank beside them (positive frame, all dimensions;
-- rank 1 = best; ties share the lower rank).
with

scores as (
    select * from {{ ref('debiased_scores') }}
    where framing = 'positive' and judge_score_norm is not null
),

per_model as (
    select
        judge,
        model,
        avg(judge_score_norm) as mean_score,
        avg(debiased_score_norm) as mean_debiased_score,
        avg(human_score_norm) as mean_human_score,
        count(*) as n
    from scores
    group by judge, model
),

final as (
    select
        judge,
        model,
        mean_score,
        rank() over (partition by judge order by mean_score desc) as rank,
        mean_debiased_score,
        rank() over (partition by judge order by mean_debiased_score desc) as debiased_rank,
        mean_human_score,
        rank() over (
            partition by judge order by mean_human_score desc nulls last
        ) as human_rank,
        n
    from per_model
)

select * from final
