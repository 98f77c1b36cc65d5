{{ config(incremental_by_prompt()) -}}
{{ load_prompt_dependencies() -}}
-- Per judge x dimension x prompt, each distinct pair of normalised scores (judge,
-- human) of the positive frame with the ratings that have it: the contingency
-- table of the correlations and the per-prompt totals of their design effect
-- (agreement_judge_human), in SQL so that any engine computes it. The rows of
-- int_agreement_binary_ratings (the same pairs, grouped the same way) whose human
-- score is known: a filter on a grouping column commutes with the grouping, so
-- this reads ~8.5M aggregated rows instead of grouping 10M ratings again
-- (2.3 CPU s at 10M ratings before, issue 34).
with

final as (
    select
        judge,
        dimension,
        prompt_id,
        judge_score_norm,
        human_score_norm,
        n_rows
    from {{ ref('int_agreement_binary_ratings') }}
    where
        human_score_norm is not null{% if is_incremental() %}
        and {{ load_prompt_condition() }}{% endif %}
)

select * from final
