-- The rows of int_agreement_binary_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_agreement_binary_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(n_judged as bigint) as n_judged,
        cast(n_labelled as bigint) as n_labelled,
        cast(n_prompts as bigint) as n_prompts,
        cast(true_pass as bigint) as true_pass,
        cast(false_pass as bigint) as false_pass,
        cast(false_fail as bigint) as false_fail,
        cast(true_fail as bigint) as true_fail,
        cast(judge_pass_rate as double) as judge_pass_rate,
        cast(human_pass_rate as double) as human_pass_rate,
        cast(accuracy as double) as accuracy,
        cast(accuracy_ci_low as double) as accuracy_ci_low,
        cast(accuracy_ci_high as double) as accuracy_ci_high,
        cast(sensitivity as double) as sensitivity,
        cast(sensitivity_ci_low as double) as sensitivity_ci_low,
        cast(sensitivity_ci_high as double) as sensitivity_ci_high,
        cast(specificity as double) as specificity,
        cast(specificity_ci_low as double) as specificity_ci_low,
        cast(specificity_ci_high as double) as specificity_ci_high,
        cast(gwet_ac1 as double) as gwet_ac1,
        cast(gwet_ac1_ci_low as double) as gwet_ac1_ci_low,
        cast(gwet_ac1_ci_high as double) as gwet_ac1_ci_high,
        cast(qwk as double) as qwk,
        cast(qwk_ci_low as double) as qwk_ci_low,
        cast(qwk_ci_high as double) as qwk_ci_high,
        cast(rg_pass_rate as double) as rg_pass_rate,
        cast(rg_pass_rate_ci_low as double) as rg_pass_rate_ci_low,
        cast(rg_pass_rate_ci_high as double) as rg_pass_rate_ci_high,
        cast(pass_threshold as double) as pass_threshold,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
