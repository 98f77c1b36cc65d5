-- The rows of int_agreement_judge_human_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_agreement_judge_human_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(n as bigint) as n,
        cast(spearman as double) as spearman,
        cast(spearman_ci_low as double) as spearman_ci_low,
        cast(spearman_ci_high as double) as spearman_ci_high,
        cast(pearson as double) as pearson,
        cast(pearson_ci_low as double) as pearson_ci_low,
        cast(pearson_ci_high as double) as pearson_ci_high,
        cast(kendall_tau_b as double) as kendall_tau_b,
        cast(kendall_tau_b_ci_low as double) as kendall_tau_b_ci_low,
        cast(kendall_tau_b_ci_high as double) as kendall_tau_b_ci_high,
        cast(gk_gamma as double) as gk_gamma,
        cast(gk_gamma_ci_low as double) as gk_gamma_ci_low,
        cast(gk_gamma_ci_high as double) as gk_gamma_ci_high,
        cast(n_prompts as bigint) as n_prompts,
        cast(pearson_design_effect as double) as pearson_design_effect,
        cast(spearman_design_effect as double) as spearman_design_effect,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
