with

source as (
    select * from {{ input_table('rating_scales') }}
),

renamed as (
    select
        {{ loader_columns(input_table('rating_scales')) }},
        {{ clean_text('dimension') }} as dimension,
        {{ clean_text('label') }} as label,
        {{ clean_text('score') }} as score_input,
        try_cast({{ clean_text('score') }} as double) as score,
        {{ clean_text('is_na') }} as is_na_input,
        coalesce({{ try_cast_boolean(clean_text('is_na')) }}, false) as is_na,
        {{ clean_text('scale_level') }} as scale_level_input,
        lower({{ clean_text('scale_level') }}) as scale_level
    from source
),

final as (
    select
        *,
        {{ reject_columns(
            [parse_error_check()]
            + missing_value_checks(['dimension', 'label'])
            + [
                reserved_name_check('dimension', 'every dimension'),
                (
                    'is_na_input is not null and ' ~ try_cast_boolean('is_na_input') ~ ' is null',
                    'invalid_value',
                    "'is_na ''' || is_na_input || ''' is not true or false'",
                ),
                (
                    'not is_na and (score is null or not ' ~ is_finite('score') ~ ')', 'invalid_value',
                    "'score ''' || coalesce(score_input, '') || ''' is not a number'",
                ),
                score_range_check('score', 'score_input', 'score'),
                (
                    "scale_level is not null and scale_level not in ('nominal', 'ordinal', 'interval')",
                    'invalid_value',
                    "'scale_level ''' || scale_level_input || ''' is not nominal, ordinal or interval'",
                ),
            ]
        ) }}
    from renamed
)

select * from final
