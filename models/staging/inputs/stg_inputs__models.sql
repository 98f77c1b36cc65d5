with

source as (
    select * from {{ ref('base_inputs__models') }}
),

renamed as (
    select
        _row_number as row_number,
        _source_file as source_file,
        _parse_error as parse_error,
        case
            when _parse_error is not null then to_json(_raw_line)
            else {{ raw_values_json(ref('base_inputs__models')) }}
        end as raw_values,
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
