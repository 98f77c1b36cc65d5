-- One row per analysis x slice x term of the bias regressions.
with

results as (
    select * from {{ ref('int_bias_results') }}
    where record_type = 'estimate'
),

final as (
    select
        cast(analysis as {{ string_type() }}) as analysis,
        cast(slice as {{ string_type() }}) as slice,
        cast(term as {{ string_type() }}) as term,
        cast(term_type as {{ string_type() }}) as term_type,
        cast(judge as {{ string_type() }}) as judge,
        cast(family as {{ string_type() }}) as family,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(estimate as double) as estimate,
        cast(std_error as double) as std_error,
        cast(z as double) as z,
        cast(p_value as double) as p_value,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        cast(ci_level as double) as ci_level,
        cast(significant as boolean) as significant,
        cast(se_type as {{ string_type() }}) as se_type,
        cast(n_obs as bigint) as n_obs,
        cast(n_support as bigint) as n_support
    from results
)

select * from final
