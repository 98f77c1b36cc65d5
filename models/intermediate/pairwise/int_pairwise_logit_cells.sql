-- Per judge x prompt x distinct regressors, the valid judgments (trials; decisive
-- or ties) and those choosing the first slot (successes): the logistic fits of the
-- pairwise marts (length_slope, *_given_human, pairwise_joint_bias) have the same
-- likelihood and prompt-clustered scores on these cells as on the rows. x is the
-- tanh length difference over the pair's mean length (pairwise_features; null
-- when a length is missing or negative or both are 0), own_code +1 / -1 when the
-- judge's own completion is first / second, human_code +1 / -1 / 0 for a human
-- verdict first / second / otherwise.
with

decisive as (
    select
        judge,
        prompt_id,
        decisive,
        chose_first,
        human_any,
        case
            when length_first >= 0 and length_second >= 0 and length_first + length_second > 0
                then tanh((length_first - length_second) / ((length_first + length_second) / 2.0))
        end as x,
        case when self_first then 1 when self_second then -1 else 0 end as own_code,
        case when human_verdict = 'first' then 1 when human_verdict = 'second' then -1 else 0 end
            as human_code
    from {{ ref('int_pairwise_flags') }}
    where not invalid
),

final as (
    select
        judge,
        prompt_id,
        decisive,
        x,
        own_code,
        human_code,
        human_any,
        count(*) as n_trials,
        sum(case when chose_first then 1 else 0 end) as n_first
    from decisive
    group by judge, prompt_id, decisive, x, own_code, human_code, human_any
)

select * from final
