with

source as (
    select * from {{ ref('base_inputs__human_annotations') }}
),

renamed as (
    select
        {{ loader_columns(ref('base_inputs__human_annotations')) }},
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
            + [(
                'n_aggregated_input is not null'
                ~ ' and coalesce(try_cast(n_aggregated_input as integer) < 1, true)',
                'invalid_value',
                "'n_aggregated ''' || n_aggregated_input || ''' is not a whole number >= 1'",
            ), (
                "role not in ('annotator', 'expert')",
                'invalid_value',
                "'role ''' || role || ''' is not annotator or expert'",
            )]
        ) }}
    from renamed
)

select * from final
