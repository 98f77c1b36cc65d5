-- The rows of int_pairwise_perplexity_bins_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_pairwise_perplexity_bins_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(bin as bigint) as bin,
        cast(log_ppl_diff_low as double) as log_ppl_diff_low,
        cast(log_ppl_diff_high as double) as log_ppl_diff_high,
        cast(n_judgments as bigint) as n_judgments,
        cast(judge_first_rate as double) as judge_first_rate,
        cast(judge_first_rate_ci_low as double) as judge_first_rate_ci_low,
        cast(judge_first_rate_ci_high as double) as judge_first_rate_ci_high,
        cast(n_human as bigint) as n_human,
        cast(human_first_rate as double) as human_first_rate,
        cast(human_first_rate_ci_low as double) as human_first_rate_ci_low,
        cast(human_first_rate_ci_high as double) as human_first_rate_ci_high,
        -- the method of the row's intervals: null on a row without any (all null)
        cast(case when coalesce(
            judge_first_rate_ci_low, judge_first_rate_ci_high, human_first_rate_ci_low,
            human_first_rate_ci_high
        ) is not null then ci_method end as {{ string_type() }}) as ci_method
    from results
)

select * from final
