with

source as (
    select * from {{ input_table('models') }}
),

renamed as (
    select
        {{ loader_columns(input_table('models')) }},
        {{ clean_text('alias') }} as alias,
        {{ clean_text('model') }} as model,
        {{ clean_text('family') }} as family,
        {{ clean_text('previous_version') }} as previous_version
    from source
),

final as (
    select
        *,
        {{ reject_columns(
            [parse_error_check()]
            + missing_value_checks(['alias', 'model', 'family'])
            + [reserved_name_check('model', 'every model')]
        ) }}
    from renamed
)

select * from final
