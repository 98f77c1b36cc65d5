-- The rows of int_ppi_model_scores_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_ppi_model_scores_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(is_panel as boolean) as is_panel,
        cast(model as {{ string_type() }}) as model,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(estimate as double) as estimate,
        cast(std_error as double) as std_error,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        cast(classical_estimate as double) as classical_estimate,
        cast(classical_std_error as double) as classical_std_error,
        cast(classical_ci_low as double) as classical_ci_low,
        cast(classical_ci_high as double) as classical_ci_high,
        cast(skewness as double) as skewness,
        cast(judge_mean as double) as judge_mean,
        cast(judge_minus_estimate as double) as judge_minus_estimate,
        cast(ess_gain as double) as ess_gain,
        cast(effective_sample_size as double) as effective_sample_size,
        cast(n_labelled as bigint) as n_labelled,
        cast(n_unlabelled as bigint) as n_unlabelled,
        cast(n_units as bigint) as n_units,
        cast(n_human_na as bigint) as n_human_na,
        cast(n_judge_na as bigint) as n_judge_na,
        cast(n_strata as bigint) as n_strata,
        cast(lambda_min as double) as lambda_min,
        cast(lambda_max as double) as lambda_max,
        cast(strata as {{ string_type() }}) as strata,
        cast(method as {{ string_type() }}) as method,
        cast(variance_method as {{ string_type() }}) as variance_method,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
