-- One row per accepted completion with its length and length_feature:
-- tanh of the length's z-score among the prompt's completions (sample
-- standard deviation), null when the prompt's lengths do not vary.
with

completions as (
    select * from {{ ref('int_completions_checked') }}
    where reject_code is null
),

prompt_stats as (
    select
        *,
        avg(length_tokens) over (partition by prompt_id) as prompt_mean_length,
        stddev_samp(length_tokens) over (partition by prompt_id) as prompt_sd_length
    from completions
),

final as (
    select
        prompt_id,
        model,
        model_family,
        length_tokens,
        length_source,
        prompt_mean_length,
        prompt_sd_length,
        case
            when prompt_sd_length > 0
                then tanh((length_tokens - prompt_mean_length) / prompt_sd_length)
        end as length_feature
    from prompt_stats
)

select * from final
