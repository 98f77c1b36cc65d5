-- The rows of int_model_comparisons_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_model_comparisons_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(is_panel as boolean) as is_panel,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(model_a as {{ string_type() }}) as model_a,
        cast(model_b as {{ string_type() }}) as model_b,
        cast(difference as double) as difference,
        cast(std_error as double) as std_error,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        cast(p_value as double) as p_value,
        cast(p_value_holm as double) as p_value_holm,
        cast(p_value_bh as double) as p_value_bh,
        cast(significant as boolean) as significant,
        cast(significant_holm as boolean) as significant_holm,
        cast(significant_bh as boolean) as significant_bh,
        cast(n_tests as bigint) as n_tests,
        cast(human_only_difference as double) as human_only_difference,
        cast(human_only_std_error as double) as human_only_std_error,
        cast(human_only_ci_low as double) as human_only_ci_low,
        cast(human_only_ci_high as double) as human_only_ci_high,
        cast(human_only_p_value as double) as human_only_p_value,
        cast(judge_only_difference as double) as judge_only_difference,
        cast(judge_only_std_error as double) as judge_only_std_error,
        cast(judge_only_ci_low as double) as judge_only_ci_low,
        cast(judge_only_ci_high as double) as judge_only_ci_high,
        cast(judge_only_p_value as double) as judge_only_p_value,
        cast(judge_minus_human_gap as double) as judge_minus_human_gap,
        cast(min_detectable_difference as double) as min_detectable_difference,
        cast(pairing_variance_ratio as double) as pairing_variance_ratio,
        cast(n_labelled_a as bigint) as n_labelled_a,
        cast(n_labelled_b as bigint) as n_labelled_b,
        cast(n_units_a as bigint) as n_units_a,
        cast(n_units_b as bigint) as n_units_b,
        cast(n_paired_units as bigint) as n_paired_units,
        cast(method as {{ string_type() }}) as method,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
