-- The rows of int_agreement_counterfactual_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_agreement_counterfactual_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(n_items as bigint) as n_items,
        cast(n_prompts as bigint) as n_prompts,
        cast(alpha_observed as double) as alpha_observed,
        cast(alpha_observed_ci_low as double) as alpha_observed_ci_low,
        cast(alpha_observed_ci_high as double) as alpha_observed_ci_high,
        cast(alpha_calibrated as double) as alpha_calibrated,
        cast(alpha_calibrated_ci_low as double) as alpha_calibrated_ci_low,
        cast(alpha_calibrated_ci_high as double) as alpha_calibrated_ci_high,
        cast(correctable_share as double) as correctable_share,
        cast(n_boot as bigint) as n_boot,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
