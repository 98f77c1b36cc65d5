-- Every human_annotations row, resolved to canonical model and dimension and
-- scored on its dimension's scale, with the reason when it is rejected.
-- The CTEs read more than once are not materialised (as in
-- int_judge_ratings_checked): DuckDB would buffer every row and column of each.
with

annotations as {{ not_materialized() }} (
    select * from {{ ref('stg_inputs__human_annotations') }}
),

{{ reference_ctes() }}

-- Names, dimensions and labels resolved once per distinct value, then joined.
model_names as (
    {{ name_lookup('annotations', 'model_alias', 'model', 'model_family') }}
),

answers as (
    {{ answer_lookup('annotations', 'label') }}
),

joined as {{ not_materialized() }} (
    select
        {{ star_except('annotations', ['reject_code', 'reject_reason']) }},
        annotations.reject_code as staging_reject_code,
        annotations.reject_reason as staging_reject_reason,
        model_names.model,
        model_names.model_family,
        answers.dimension,
        answers.scale_min,
        answers.scale_max,
        answers.scale_labels,
        prompts.prompt_id as known_prompt_id,
        prompt_file.has_prompts,
        answers.is_na,
        answers.score_source,
        answers.score_as_given
    from annotations
    left join model_names
        on annotations.model_alias is not distinct from model_names.model_alias
    left join answers
        on
            annotations.dimension_input is not distinct from answers.dimension_input
            and annotations.label is not distinct from answers.label
    cross join prompt_file
    left join prompts
        on annotations.prompt_id = prompts.prompt_id
),

checked as {{ not_materialized() }} (
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
