-- The rows of int_model_win_rates_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_model_win_rates_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(model as {{ string_type() }}) as model,
        cast(n_judgments as bigint) as n_judgments,
        cast(n_prompts as bigint) as n_prompts,
        cast(n_with_human as bigint) as n_with_human,
        cast(judge_win_rate as double) as judge_win_rate,
        cast(judge_win_rate_std_error as double) as judge_win_rate_std_error,
        cast(judge_win_rate_ci_low as double) as judge_win_rate_ci_low,
        cast(judge_win_rate_ci_high as double) as judge_win_rate_ci_high,
        cast(human_win_rate as double) as human_win_rate,
        cast(human_win_rate_std_error as double) as human_win_rate_std_error,
        cast(human_win_rate_ci_low as double) as human_win_rate_ci_low,
        cast(human_win_rate_ci_high as double) as human_win_rate_ci_high,
        cast(judge_win_rate_with_human as double) as judge_win_rate_with_human,
        cast(judge_win_rate_with_human_std_error as double) as judge_win_rate_with_human_std_error,
        cast(judge_win_rate_with_human_ci_low as double) as judge_win_rate_with_human_ci_low,
        cast(judge_win_rate_with_human_ci_high as double) as judge_win_rate_with_human_ci_high,
        cast(judge_minus_human as double) as judge_minus_human,
        cast(judge_minus_human_std_error as double) as judge_minus_human_std_error,
        cast(judge_minus_human_ci_low as double) as judge_minus_human_ci_low,
        cast(judge_minus_human_ci_high as double) as judge_minus_human_ci_high,
        cast(judge_minus_human_p_value as double) as judge_minus_human_p_value,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
