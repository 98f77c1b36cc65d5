with

source as (
    select * from {{ input_table('prompts') }}
),

renamed as (
    select
        {{ loader_columns(input_table('prompts')) }},
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
