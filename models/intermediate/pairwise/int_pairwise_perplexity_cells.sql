-- Per judge x prompt x distinct log-perplexity difference log(perplexity_first) -
-- log(perplexity_second) (both perplexities > 0; accepted judgments only), the
-- judgments, their decisive verdicts and first-slot choices, and the same for the
-- human verdicts: pairwise_perplexity_bins cuts each judge's quantile bins and
-- rates from these cells.
with

scored as (
    select
        judge,
        prompt_id,
        ln(perplexity_first) - ln(perplexity_second) as log_ppl_diff,
        decisive,
        chose_first,
        human_decisive,
        human_first
    from {{ ref('int_pairwise_flags') }}
    where not invalid and perplexity_first > 0 and perplexity_second > 0
),

final as (
    select
        judge,
        prompt_id,
        log_ppl_diff,
        count(*) as n_judgments,
        sum(case when decisive then 1 else 0 end) as n_decisive,
        sum(case when chose_first then 1 else 0 end) as n_first,
        sum(case when human_decisive then 1 else 0 end) as n_human_decisive,
        sum(case when human_first then 1 else 0 end) as n_human_first
    from scored
    group by judge, prompt_id, log_ppl_diff
)

select * from final
