-- Per judge x opponent (null: pairs without the judge's own model), the valid
-- judgments with a human verdict counted per (verdict, human_verdict): Cohen's
-- kappa of pairwise_bias is computed from these tables.
with

judged as (
    select
        judge,
        opponent,
        verdict,
        human_verdict
    from {{ ref('int_pairwise_flags') }}
    where not invalid and human_any
),

final as (
    select
        judge,
        opponent,
        verdict,
        human_verdict,
        count(*) as n
    from judged
    group by judge, opponent, verdict, human_verdict
)

select * from final
