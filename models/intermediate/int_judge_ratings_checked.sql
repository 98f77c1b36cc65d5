-- Every judge_ratings row, resolved to canonical judge, model and dimension and
-- scored on its dimension's scale, with the reason when it is rejected.
-- Numbers given under the inverted frame ("1 is best") are mapped back with
-- min + max - score; text labels mean the same under both frames.
with

ratings as (
    select * from {{ ref('stg_inputs__judge_ratings') }}
),

{{ reference_ctes() }}

joined as (
    select
        ratings.* exclude (reject_code, reject_reason),
        ratings.reject_code as staging_reject_code,
        ratings.reject_reason as staging_reject_reason,
        judges.model as judge,
        judges.family as judge_family,
        models.model,
        models.family as model_family,
        scales.dimension,
        scales.scale_min,
        scales.scale_max,
        scales.scale_labels,
        prompts.prompt_id as known_prompt_id,
        prompt_file.has_prompts,
        {{ scored_label_columns('ratings.answer') }}
    from ratings
    left join scales
        on {{ text_key('ratings.dimension_input') }} = scales.dimension_key
    left join labels
        on
            scales.dimension_key = labels.dimension_key
            and {{ label_key('ratings.answer') }} = labels.label_key
    left join aliases as judges
        on {{ text_key('ratings.judge_alias') }} = judges.alias_key
    left join aliases as models
        on {{ text_key('ratings.model_alias') }} = models.alias_key
    cross join prompt_file
    left join prompts
        on ratings.prompt_id = prompts.prompt_id
),

checked as (
    select
        *,
        {{ reject_columns(
            scored_checks('answer', [
                ('judge', 'judge', 'judge_alias'), ('model', 'model', 'model_alias'),
            ]),
            keep_staging_reason=true,
        ) }}
    from joined
),

deduplicated as (
    {{ flag_duplicates(
        'checked',
        ['judge', 'prompt_id', 'model', 'dimension', 'framing', 'run_id'],
        'judge, prompt_id, model, dimension, framing and run_id',
    ) }}
),

final as (
    select
        *,
        case
            when is_na then null
            when framing = 'inverted' and score_source = 'number'
                then scale_min + scale_max - score_as_given
            else score_as_given
        end as judge_score
    from deduplicated
)

select * from final
