-- Every human_annotations row, resolved to canonical model and dimension and
-- scored on its dimension's scale, with the reason when it is rejected.
with

annotations as (
    select * from {{ ref('stg_inputs__human_annotations') }}
),

{{ reference_ctes() }}

joined as (
    select
        annotations.* exclude (reject_code, reject_reason),
        annotations.reject_code as staging_reject_code,
        annotations.reject_reason as staging_reject_reason,
        models.model,
        models.family as model_family,
        scales.dimension,
        scales.scale_min,
        scales.scale_max,
        scales.scale_labels,
        prompts.prompt_id as known_prompt_id,
        prompt_file.has_prompts,
        {{ scored_label_columns('annotations.label') }}
    from annotations
    left join scales
        on {{ text_key('annotations.dimension_input') }} = scales.dimension_key
    left join labels
        on
            scales.dimension_key = labels.dimension_key
            and {{ label_key('annotations.label') }} = labels.label_key
    left join aliases as models
        on {{ text_key('annotations.model_alias') }} = models.alias_key
    cross join prompt_file
    left join prompts
        on annotations.prompt_id = prompts.prompt_id
),

checked as (
    select
        *,
        {{ reject_columns(
            scored_checks('label', [('model', 'model', 'model_alias')]),
            keep_staging_reason=true,
        ) }}
    from joined
),

deduplicated as (
    {{ flag_duplicates(
        'checked',
        ['prompt_id', 'model', 'dimension', 'annotator_id'],
        'prompt_id, model, dimension and annotator_id',
    ) }}
),

final as (
    select
        *,
        case when not is_na then score_as_given end as human_score
    from deduplicated
)

select * from final
