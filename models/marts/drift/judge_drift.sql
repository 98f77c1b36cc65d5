-- The rows of int_judge_drift_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_judge_drift_results') }}
),

final as (
    select
        cast(judge_before as {{ string_type() }}) as judge_before,
        cast(judge_after as {{ string_type() }}) as judge_after,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(n_items as bigint) as n_items,
        cast(n_prompts as bigint) as n_prompts,
        cast(mean_before as double) as mean_before,
        cast(mean_after as double) as mean_after,
        cast(mean_shift as double) as mean_shift,
        cast(mean_shift_ci_low as double) as mean_shift_ci_low,
        cast(mean_shift_ci_high as double) as mean_shift_ci_high,
        cast(qwk as double) as qwk,
        cast(qwk_ci_low as double) as qwk_ci_low,
        cast(qwk_ci_high as double) as qwk_ci_high,
        cast(alpha_interval as double) as alpha_interval,
        cast(alpha_interval_ci_low as double) as alpha_interval_ci_low,
        cast(alpha_interval_ci_high as double) as alpha_interval_ci_high,
        cast(spearman as double) as spearman,
        cast(spearman_ci_low as double) as spearman_ci_low,
        cast(spearman_ci_high as double) as spearman_ci_high,
        cast(flip_rate as double) as flip_rate,
        cast(flip_rate_ci_low as double) as flip_rate_ci_low,
        cast(flip_rate_ci_high as double) as flip_rate_ci_high,
        cast(pass_flip_rate as double) as pass_flip_rate,
        cast(pass_flip_rate_ci_low as double) as pass_flip_rate_ci_low,
        cast(pass_flip_rate_ci_high as double) as pass_flip_rate_ci_high,
        cast(accuracy_change as double) as accuracy_change,
        cast(accuracy_change_ci_low as double) as accuracy_change_ci_low,
        cast(accuracy_change_ci_high as double) as accuracy_change_ci_high,
        cast(mean_shift_p_value as double) as mean_shift_p_value,
        cast(n_labelled as bigint) as n_labelled,
        cast(accuracy_before as double) as accuracy_before,
        cast(accuracy_after as double) as accuracy_after,
        cast(drift_flag as boolean) as drift_flag,
        cast(drift_reasons as {{ string_type() }}) as drift_reasons,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
