-- The rows of int_perturbation_bias_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_perturbation_bias_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(bias_type as {{ string_type() }}) as bias_type,
        cast(n_items as bigint) as n_items,
        cast(n_robustness_rate as bigint) as n_robustness_rate,
        cast(robustness_rate as double) as robustness_rate,
        cast(robustness_rate_ci_low as double) as robustness_rate_ci_low,
        cast(robustness_rate_ci_high as double) as robustness_rate_ci_high,
        cast(n_consistency_rate as bigint) as n_consistency_rate,
        cast(consistency_rate as double) as consistency_rate,
        cast(consistency_rate_ci_low as double) as consistency_rate_ci_low,
        cast(consistency_rate_ci_high as double) as consistency_rate_ci_high,
        cast(n_accuracy_original as bigint) as n_accuracy_original,
        cast(accuracy_original as double) as accuracy_original,
        cast(accuracy_original_ci_low as double) as accuracy_original_ci_low,
        cast(accuracy_original_ci_high as double) as accuracy_original_ci_high,
        cast(n_accuracy_perturbed as bigint) as n_accuracy_perturbed,
        cast(accuracy_perturbed as double) as accuracy_perturbed,
        cast(accuracy_perturbed_ci_low as double) as accuracy_perturbed_ci_low,
        cast(accuracy_perturbed_ci_high as double) as accuracy_perturbed_ci_high,
        cast(n_error_rate as bigint) as n_error_rate,
        cast(mean_score_original as double) as mean_score_original,
        cast(mean_score_perturbed as double) as mean_score_perturbed,
        cast(relative_change as double) as relative_change,
        cast(relative_change_ci_low as double) as relative_change_ci_low,
        cast(relative_change_ci_high as double) as relative_change_ci_high,
        cast(error_rate as double) as error_rate,
        cast(error_rate_ci_low as double) as error_rate_ci_low,
        cast(error_rate_ci_high as double) as error_rate_ci_high,
        -- the method of the row's intervals: null on a row without any (all null)
        cast(case when coalesce(
            robustness_rate_ci_low, robustness_rate_ci_high, consistency_rate_ci_low,
            consistency_rate_ci_high, accuracy_original_ci_low,
            accuracy_original_ci_high, accuracy_perturbed_ci_low,
            accuracy_perturbed_ci_high, relative_change_ci_low,
            relative_change_ci_high, error_rate_ci_low, error_rate_ci_high
        ) is not null then ci_method end as {{ string_type() }}) as ci_method,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
