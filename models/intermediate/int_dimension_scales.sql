-- One row per dimension with an accepted scale: its canonical name (as first
-- spelled in rating_scales), range, label vocabulary and level of measurement
-- (rating_scales.scale_level; interval when no row states one, as before).
with

scale_rows as (
    select * from {{ ref('int_rating_scales_checked') }}
    where reject_code is null
),

final as (
    select
        dimension_key,
        {{ first_by('dimension', ['row_number']) }} as dimension,
        min(scale_min) as scale_min,
        min(scale_max) as scale_max,
        count(distinct score) filter (where not is_na) as n_levels,
        {{ ordered_string_agg('label', ', ', 'is_na, score, row_number') }} as scale_labels,
        coalesce(min(scale_level), 'interval') as level_of_measurement
    from scale_rows
    group by dimension_key
)

select * from final
