with

source as (
    select * from {{ ref('base_inputs__models') }}
),

renamed as (
    select
        {{ loader_columns(ref('base_inputs__models')) }},
        {{ clean_text('alias') }} as alias,
        {{ clean_text('model') }} as model,
        {{ clean_text('family') }} as family
    from source
),

final as (
    select
        *,
        {{ reject_columns(
            [parse_error_check()] + missing_value_checks(['alias', 'model', 'family'])
        ) }}
    from renamed
)

select * from final
