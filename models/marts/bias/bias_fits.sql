-- One row per analysis x slice: the fit's size, R squared and notes (which
-- terms could not be identified and why, which rows were removed).
with

results as (
    select * from {{ ref('int_bias_results') }}
    where record_type = 'fit'
),

final as (
    select
        cast(analysis as {{ string_type() }}) as analysis,
        cast(slice as {{ string_type() }}) as slice,
        cast(model_type as {{ string_type() }}) as model_type,
        cast(n_obs as bigint) as n_obs,
        cast(n_params as bigint) as n_params,
        cast(r_squared as double) as r_squared,
        cast(se_type as {{ string_type() }}) as se_type,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
