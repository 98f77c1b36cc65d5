-- The rows of int_self_vs_peer_tests_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_self_vs_peer_tests_results') }}
),

final as (
    select
        cast(judge as {{ string_type() }}) as judge,
        cast(framing as {{ string_type() }}) as framing,
        cast(n as bigint) as n,
        cast(mean_self as double) as mean_self,
        cast(se_self as double) as se_self,
        cast(mean_received as double) as mean_received,
        cast(se_received as double) as se_received,
        cast(mean_given as double) as mean_given,
        cast(se_given as double) as se_given,
        cast(mean_self_minus_received as double) as mean_self_minus_received,
        cast(t_self_received as double) as t_self_received,
        cast(p_self_received as double) as p_self_received,
        cast(ci_low_self_received as double) as ci_low_self_received,
        cast(ci_high_self_received as double) as ci_high_self_received,
        cast(mean_self_minus_given as double) as mean_self_minus_given,
        cast(t_self_given as double) as t_self_given,
        cast(p_self_given as double) as p_self_given,
        cast(ci_low_self_given as double) as ci_low_self_given,
        cast(ci_high_self_given as double) as ci_high_self_given,
        cast(self_enhancement_error_rate as double) as self_enhancement_error_rate,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
