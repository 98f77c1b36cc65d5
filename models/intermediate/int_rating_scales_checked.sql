-- Every rating_scales row with its matching keys and reject reason; a
-- dimension's scale runs from its lowest to its highest accepted score. A
-- dimension whose rows state two different scale_level values is rejected
-- whole: which level its headline alpha uses would be a guess.
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
            over (partition by dimension_key) as scale_max,
        min(scale_level) filter (where reject_code is null)
            over (partition by dimension_key) as first_scale_level,
        max(scale_level) filter (where reject_code is null)
            over (partition by dimension_key) as last_scale_level
    from deduplicated
),

final as (
    select
        {{ star_except('', ['reject_code', 'reject_reason']) }},
        coalesce(
            reject_code,
            case
                when
                    scale_min is null or scale_max <= scale_min
                    or first_scale_level <> last_scale_level
                    then 'invalid_scale'
            end
        ) as reject_code,
        coalesce(
            reject_reason,
            case
                when scale_min is null or scale_max <= scale_min
                    then
                        'dimension ''' || dimension
                        || ''' needs at least two different scores on its scale'
                when first_scale_level <> last_scale_level
                    then
                        'dimension ''' || dimension || ''' states more than one scale_level ('
                        || first_scale_level || ', ' || last_scale_level || ')'
            end
        ) as reject_reason
    from ranged
)

select * from final
