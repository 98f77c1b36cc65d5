-- Every pairwise_judgments row, resolved to canonical judge and models, with the
-- two completions' lengths, self flags, the unordered-pair key shared by both
-- orders, whether the other order was also accepted, and the reason when it is
-- rejected. kept_as_invalid: rejected for an unparseable verdict only (still a
-- rejected row), kept by pairwise_bias as the verdict `invalid`.
{% set checks = [
    unknown_model_check('judge', 'judge', 'judge_alias'),
    unknown_model_check('model_first', 'model_first', 'model_first_alias'),
    unknown_model_check('model_second', 'model_second', 'model_second_alias'),
    (
        'model_first = model_second', 'invalid_value',
        "'model_first and model_second are the same model ''' || model_first"
        ~ " || ''': a pair needs two models'",
    ),
    unknown_prompt_check(),
] %}
with

judgments as (
    select * from {{ ref('stg_inputs__pairwise_judgments') }}
),

{{ reference_ctes(with_scales=false) }}

lengths as (
    select * from {{ ref('int_completion_lengths') }}
),

-- Names resolved once per distinct value (name_lookup), then joined back.
judge_names as (
    {{ name_lookup('judgments', 'judge_alias', 'judge', 'judge_family') }}
),

first_names as (
    {{ name_lookup('judgments', 'model_first_alias', 'model_first', 'model_first_family') }}
),

second_names as (
    {{ name_lookup('judgments', 'model_second_alias', 'model_second', 'model_second_family') }}
),

joined as (
    select
        {{ star_except('judgments', ['reject_code', 'reject_reason']) }},
        judgments.reject_code as staging_reject_code,
        judgments.reject_reason as staging_reject_reason,
        judge_names.judge,
        judge_names.judge_family,
        first_names.model_first,
        first_names.model_first_family,
        second_names.model_second,
        second_names.model_second_family,
        prompts.prompt_id as known_prompt_id,
        prompt_file.has_prompts
    from judgments
    left join judge_names
        on judgments.judge_alias is not distinct from judge_names.judge_alias
    left join first_names
        on judgments.model_first_alias is not distinct from first_names.model_first_alias
    left join second_names
        on judgments.model_second_alias is not distinct from second_names.model_second_alias
    cross join prompt_file
    left join prompts
        on judgments.prompt_id = prompts.prompt_id
),

checked as (
    select
        *,
        -- rejected for an unparseable verdict alone (staging) and passing these
        -- checks too: pairwise_bias keeps it as an `invalid` verdict
        (
            verdict_only_problem
            {%- for condition, _code, _reason in checks %}
                and not coalesce({{ condition }}, false)
            {%- endfor %}
        ) as invalid_candidate,
        {{ reject_columns(checks, keep_staging_reason=true) }}
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
        {{ json_array_text([
            'deduplicated.judge',
            'deduplicated.prompt_id',
            'least(deduplicated.model_first, deduplicated.model_second)',
            'greatest(deduplicated.model_first, deduplicated.model_second)',
            'deduplicated.run_id',
        ]) }} as pair_key
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

-- the first invalid-verdict row of each key (a repeated key is not kept twice)
first_invalid as (
    select
        judge,
        prompt_id,
        model_first,
        model_second,
        run_id,
        min(row_number) as first_row
    from keyed
    where invalid_candidate
    group by judge, prompt_id, model_first, model_second, run_id
),

final as (
    select
        keyed.*,
        -- accepted rows are unique per ordered pair, so the join finds at most one
        -- row: the same pair in the other order
        swapped.judge is not null as has_swapped,
        coalesce(
            keyed.row_number = first_invalid.first_row and same_key.judge is null, false
        ) as kept_as_invalid
    from keyed
    left join first_invalid
        on
            keyed.invalid_candidate
            and keyed.judge = first_invalid.judge
            and keyed.prompt_id = first_invalid.prompt_id
            and keyed.model_first = first_invalid.model_first
            and keyed.model_second = first_invalid.model_second
            and keyed.run_id = first_invalid.run_id
    -- an accepted row with the same key wins over an invalid one
    left join accepted as same_key
        on
            keyed.invalid_candidate
            and keyed.judge = same_key.judge
            and keyed.prompt_id = same_key.prompt_id
            and keyed.model_first = same_key.model_first
            and keyed.model_second = same_key.model_second
            and keyed.run_id = same_key.run_id
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
