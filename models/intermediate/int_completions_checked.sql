-- Every completions row, resolved to the canonical model, with its length in
-- tokens and the reason when it is rejected. Tokens are counted on the text
-- when it is given (each run of Unicode letters, digits and underscores, and
-- each other non-space character, is one token: a rough, dependency-free
-- stand-in for a BPE tokenizer), else taken from length_tokens.
with

completions as (
    select * from {{ ref('stg_inputs__completions') }}
),

{{ reference_ctes(with_scales=false) }}

joined as (
    select
        {{ star_except('completions', ['reject_code', 'reject_reason']) }},
        completions.reject_code as staging_reject_code,
        completions.reject_reason as staging_reject_reason,
        models.model,
        models.family as model_family,
        prompts.prompt_id as known_prompt_id,
        prompt_file.has_prompts
    from completions
    left join aliases as models
        on {{ text_key('completions.model_alias') }} = models.alias_key
    cross join prompt_file
    left join prompts
        on completions.prompt_id = prompts.prompt_id
),

checked as (
    select
        *,
        {{ reject_columns(
            [
                unknown_model_check('model', 'model', 'model_alias'),
                unknown_prompt_check(),
            ],
            keep_staging_reason=true,
        ) }}
    from joined
),

deduplicated as (
    {{ flag_duplicates('checked', ['prompt_id', 'model'], 'prompt_id and model') }}
),

final as (
    select
        *,
        case
            when completion_text is not null
                then {{ regex_count_matches('completion_text', '[\\pL\\pN_]+|[^\\pL\\pN_\\s]') }}
            else length_tokens_given
        end as length_tokens,
        case
            when completion_text is not null then 'completion_text'
            when length_tokens_given is not null then 'length_tokens'
        end as length_source
    from deduplicated
)

select * from final
