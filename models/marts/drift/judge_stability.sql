-- The rows of int_judge_stability_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_judge_stability_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(n_items as bigint) as n_items,
        cast(n_prompts as bigint) as n_prompts,
        cast(n_runs as bigint) as n_runs,
        cast(flip_rate as double) as flip_rate,
        cast(flip_rate_ci_low as double) as flip_rate_ci_low,
        cast(flip_rate_ci_high as double) as flip_rate_ci_high,
        cast(pass_cross_rate as double) as pass_cross_rate,
        cast(pass_cross_rate_ci_low as double) as pass_cross_rate_ci_low,
        cast(pass_cross_rate_ci_high as double) as pass_cross_rate_ci_high,
        cast(within_item_sd as double) as within_item_sd,
        cast(within_item_sd_ci_low as double) as within_item_sd_ci_low,
        cast(within_item_sd_ci_high as double) as within_item_sd_ci_high,
        cast(mean_score as double) as mean_score,
        cast(pass_threshold as double) as pass_threshold,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
