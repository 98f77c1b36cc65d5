-- Every rating_scales row with its matching keys and reject reason; a
-- dimension's scale runs from its lowest to its highest accepted score.
with

scales as (
    select * from {{ ref('stg_inputs__rating_scales') }}
),

keyed as (
    select
        *,
        {{ text_key('dimension') }} as dimension_key,
        {{ label_key('label') }} as label_key
    from scales
),

deduplicated as (
    {{ flag_duplicates('keyed', ['dimension_key', 'label_key'], 'dimension and label') }}
),

ranged as (
    select
        *,
        min(score) filter (where reject_code is null and not is_na)
            over (partition by dimension_key) as scale_min,
        max(score) filter (where reject_code is null and not is_na)
            over (partition by dimension_key) as scale_max
    from deduplicated
),

final as (
    select
        {{ star_except('', ['reject_code', 'reject_reason']) }},
        coalesce(
            reject_code,
            case when scale_min is null or scale_max <= scale_min then 'invalid_scale' end
        ) as reject_code,
        coalesce(
            reject_reason,
            case
                when scale_min is null or scale_max <= scale_min
                    then
                        'dimension ''' || dimension
                        || ''' needs at least two different scores on its scale'
            end
        ) as reject_reason
    from ranged
)

select * from final
