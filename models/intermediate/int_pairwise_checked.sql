-- Every pairwise_judgments row, resolved to canonical judge and models, with the
-- two completions' lengths, self flags, the unordered-pair key shared by both
-- orders, whether the other order was also accepted, and the reason when it is
-- rejected.
with

judgments as (
    select * from {{ ref('stg_inputs__pairwise_judgments') }}
),

{{ reference_ctes(with_scales=false) }}

lengths as (
    select * from {{ ref('int_completion_lengths') }}
),

joined as (
    select
        judgments.* exclude (reject_code, reject_reason),
        judgments.reject_code as staging_reject_code,
        judgments.reject_reason as staging_reject_reason,
        judges.model as judge,
        judges.family as judge_family,
        models_first.model as model_first,
        models_first.family as model_first_family,
        models_second.model as model_second,
        models_second.family as model_second_family,
        prompts.prompt_id as known_prompt_id,
        prompt_file.has_prompts
    from judgments
    left join aliases as judges
        on {{ text_key('judgments.judge_alias') }} = judges.alias_key
    left join aliases as models_first
        on {{ text_key('judgments.model_first_alias') }} = models_first.alias_key
    left join aliases as models_second
        on {{ text_key('judgments.model_second_alias') }} = models_second.alias_key
    cross join prompt_file
    left join prompts
        on judgments.prompt_id = prompts.prompt_id
),

checked as (
    select
        *,
        {{ reject_columns(
            [
                unknown_model_check('judge', 'judge', 'judge_alias'),
                unknown_model_check('model_first', 'model_first', 'model_first_alias'),
                unknown_model_check('model_second', 'model_second', 'model_second_alias'),
                (
                    'model_first = model_second', 'invalid_value',
                    "'model_first and model_second are the same model ''' || model_first"
                    ~ " || ''': a pair needs two models'",
                ),
                unknown_prompt_check(),
            ],
            keep_staging_reason=true,
        ) }}
    from joined
),

deduplicated as (
    {{ flag_duplicates(
        'checked',
        ['judge', 'prompt_id', 'model_first', 'model_second', 'run_id'],
        'judge, prompt_id, model_first, model_second and run_id',
    ) }}
),

keyed as (
    select
        deduplicated.*,
        lengths_first.length_tokens as length_first,
        lengths_second.length_tokens as length_second,
        coalesce(deduplicated.judge = deduplicated.model_first, false) as is_self_first,
        coalesce(deduplicated.judge = deduplicated.model_second, false) as is_self_second,
        cast(to_json([
            deduplicated.judge,
            deduplicated.prompt_id,
            least(deduplicated.model_first, deduplicated.model_second),
            greatest(deduplicated.model_first, deduplicated.model_second),
            deduplicated.run_id
        ]) as varchar) as pair_key
    from deduplicated
    left join lengths as lengths_first
        on
            deduplicated.prompt_id = lengths_first.prompt_id
            and deduplicated.model_first = lengths_first.model
    left join lengths as lengths_second
        on
            deduplicated.prompt_id = lengths_second.prompt_id
            and deduplicated.model_second = lengths_second.model
),

accepted as (
    select
        judge,
        prompt_id,
        model_first,
        model_second,
        run_id
    from keyed
    where reject_code is null
),

final as (
    select
        keyed.*,
        -- accepted rows are unique per ordered pair, so the join finds at most one
        -- row: the same pair in the other order
        swapped.judge is not null as has_swapped
    from keyed
    left join accepted as swapped
        on
            keyed.reject_code is null
            and keyed.judge = swapped.judge
            and keyed.prompt_id = swapped.prompt_id
            and keyed.run_id = swapped.run_id
            and keyed.model_first = swapped.model_second
            and keyed.model_second = swapped.model_first
)

select * from final
