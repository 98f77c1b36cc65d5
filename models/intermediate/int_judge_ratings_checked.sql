{{ config(incremental_by_prompt('run_id')) -}}
{{ load_prompt_dependencies() -}}
-- Every judge_ratings row, resolved to canonical judge, model and dimension and
-- scored on its dimension's scale, with the reason when it is rejected.
-- Numbers given under the inverted frame ("1 is best") are mapped back with
-- min + max - score; text labels mean the same under both frames.
-- The CTEs read more than once (ratings by each lookup, joined and checked by
-- the duplicate-key check) are not materialised: DuckDB would otherwise buffer
-- every row and column of each (1 GB at 1M ratings: past the 2 GB
-- memory_limit, so spilling, at 10M); inlined, each reader scans only the columns it needs.
with

ratings as {{ not_materialized() }} (
    select * from {{ ref('stg_inputs__judge_ratings') }}{{ load_prompt_filter('prompt_id', 'run_id') }}
),

{{ reference_ctes() }}

-- Names, dimensions and answers are resolved once per distinct value (the
-- regular expressions of the matching keys are the expensive part), then
-- joined back to the rows.
judge_names as (
    {{ name_lookup('ratings', 'judge_alias', 'judge', 'judge_family') }}
),

model_names as (
    {{ name_lookup('ratings', 'model_alias', 'model', 'model_family') }}
),

answers as (
    {{ answer_lookup('ratings', 'answer') }}
),

joined as {{ not_materialized() }} (
    select
        {{ star_except('ratings', ['reject_code', 'reject_reason']) }},
        ratings.reject_code as staging_reject_code,
        ratings.reject_reason as staging_reject_reason,
        judge_names.judge,
        judge_names.judge_family,
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
    from ratings
    left join judge_names
        on ratings.judge_alias is not distinct from judge_names.judge_alias
    left join model_names
        on ratings.model_alias is not distinct from model_names.model_alias
    left join answers
        on
            ratings.dimension_input is not distinct from answers.dimension_input
            and ratings.answer is not distinct from answers.answer
    cross join prompt_file
    left join prompts
        on ratings.prompt_id = prompts.prompt_id
),

checked as {{ not_materialized() }} (
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
