with

source as (
    select * from {{ input_table('judge_ratings') }}
),

renamed as (
    select
        {{ loader_columns(input_table('judge_ratings')) }},
        {{ clean_text('judge') }} as judge_alias,
        {{ clean_text('prompt_id') }} as prompt_id,
        {{ clean_text('model') }} as model_alias,
        {{ clean_text('dimension') }} as dimension_input,
        {{ clean_text('label') }} as label,
        {{ clean_text('raw_output') }} as raw_output,
        coalesce({{ text_key(clean_text('framing')) }}, 'positive') as framing,
        coalesce({{ clean_text('run_id') }}, '1') as run_id
    from source
),

answered as (
    select
        *,
        coalesce(label, {{ final_answer('raw_output') }}) as answer,
        case
            when label is not null then 'label'
            when raw_output is not null then 'raw_output'
        end as answer_source
    from renamed
),

final as (
    select
        *,
        {{ reject_columns(
            [parse_error_check()]
            + missing_value_checks([
                ('judge', 'judge_alias'), 'prompt_id', ('model', 'model_alias'),
                ('dimension', 'dimension_input'),
            ])
            + [
                (
                    'label is null and raw_output is null', 'missing_value',
                    "'both label and raw_output are empty'",
                ),
                (
                    'answer is null', 'unparseable_raw_output',
                    "'raw_output has no final ''Answer: ...'' line'",
                ),
                (
                    "framing not in ('positive', 'inverted')", 'invalid_value',
                    "'framing ''' || framing || ''' is not positive or inverted'",
                ),
            ]
        ) }}
    from answered
)

select * from final
