with

source as (
    select * from {{ input_table('human_annotations') }}
),

renamed as (
    select
        {{ loader_columns(input_table('human_annotations')) }},
        {{ clean_text('prompt_id') }} as prompt_id,
        {{ clean_text('model') }} as model_alias,
        {{ clean_text('dimension') }} as dimension_input,
        {{ clean_text('annotator_id') }} as annotator_id,
        {{ clean_text('label') }} as label,
        {{ clean_text('n_aggregated') }} as n_aggregated_input,
        coalesce(try_cast({{ clean_text('n_aggregated') }} as integer), 1) as n_aggregated,
        coalesce({{ text_key(clean_text('role')) }}, 'annotator') as role
    from source
),

final as (
    select
        *,
        {{ reject_columns(
            [parse_error_check()]
            + missing_value_checks([
                'prompt_id', ('model', 'model_alias'), ('dimension', 'dimension_input'),
                'annotator_id', 'label',
            ])
            + [count_check(
                'try_cast(n_aggregated_input as double)', 'n_aggregated_input', 'n_aggregated', 1,
            ), (
                "role not in ('annotator', 'expert')",
                'invalid_value',
                "'role ''' || role || ''' is not annotator or expert'",
            )]
        ) }}
    from renamed
)

select * from final
