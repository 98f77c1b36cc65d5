with

source as (
    select * from {{ input_table('completions') }}
),

renamed as (
    select
        {{ loader_columns(input_table('completions')) }},
        {{ clean_text('prompt_id') }} as prompt_id,
        {{ clean_text('model') }} as model_alias,
        completion_text,
        {{ clean_text('length_tokens') }} as length_tokens_input,
        try_cast({{ clean_text('length_tokens') }} as double) as length_tokens_given
    from source
),

final as (
    select
        *,
        {{ reject_columns(
            [parse_error_check()]
            + missing_value_checks(['prompt_id', ('model', 'model_alias')])
            + [count_check(
                'length_tokens_given', 'length_tokens_input', 'length_tokens', 0, whole=false,
            )]
        ) }}
    from renamed
)

select * from final
