-- The rows of int_pairwise_joint_bias_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_pairwise_joint_bias_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(n_judgments as bigint) as n_judgments,
        cast(n_own_judgments as bigint) as n_own_judgments,
        cast(uses_human_verdict as boolean) as uses_human_verdict,
        cast(position_logodds as double) as position_logodds,
        cast(position_logodds_ci_low as double) as position_logodds_ci_low,
        cast(position_logodds_ci_high as double) as position_logodds_ci_high,
        cast(self_preference_logodds as double) as self_preference_logodds,
        cast(self_preference_logodds_ci_low as double) as self_preference_logodds_ci_low,
        cast(self_preference_logodds_ci_high as double) as self_preference_logodds_ci_high,
        cast(length_slope as double) as length_slope,
        cast(length_slope_ci_low as double) as length_slope_ci_low,
        cast(length_slope_ci_high as double) as length_slope_ci_high,
        cast(human_verdict_logodds as double) as human_verdict_logodds,
        cast(human_verdict_logodds_ci_low as double) as human_verdict_logodds_ci_low,
        cast(human_verdict_logodds_ci_high as double) as human_verdict_logodds_ci_high,
        cast(self_preference_rate as double) as self_preference_rate,
        cast(length_slope_unconditional as double) as length_slope_unconditional,
        -- the method of the row's intervals: null on a row without any (all null)
        cast(case when coalesce(
            position_logodds_ci_low, position_logodds_ci_high,
            self_preference_logodds_ci_low, self_preference_logodds_ci_high,
            length_slope_ci_low, length_slope_ci_high, human_verdict_logodds_ci_low,
            human_verdict_logodds_ci_high
        ) is not null then ci_method end as {{ string_type() }}) as ci_method,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
