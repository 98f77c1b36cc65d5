with

source as (
    select * from {{ ref('base_inputs__prompts') }}
),

renamed as (
    select
        _row_number as row_number,
        _source_file as source_file,
        _parse_error as parse_error,
        case
            when _parse_error is not null then to_json(_raw_line)
            else {{ raw_values_json(ref('base_inputs__prompts')) }}
        end as raw_values,
        {{ clean_text('prompt_id') }} as prompt_id,
        {{ clean_text('dataset') }} as dataset,
        {{ clean_text('task_type') }} as task_type,
        prompt_text
    from source
),

final as (
    select
        *,
        {{ reject_columns([parse_error_check()] + missing_value_checks(['prompt_id'])) }}
    from renamed
)

select * from final
