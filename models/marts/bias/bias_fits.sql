-- One row per analysis x slice: the fit's size, R squared and notes (which
-- terms could not be identified and why, which rows were removed).
with

results as (
    select * from {{ ref('int_bias_results') }}
    where record_type = 'fit'
),

final as (
    select
        cast(analysis as varchar) as analysis,
        cast(slice as varchar) as slice,
        cast(model_type as varchar) as model_type,
        cast(n_obs as bigint) as n_obs,
        cast(n_params as bigint) as n_params,
        cast(r_squared as double) as r_squared,
        cast(se_type as varchar) as se_type,
        cast(ci_level as double) as ci_level,
        cast(notes as varchar) as notes
    from results
)

select * from final
