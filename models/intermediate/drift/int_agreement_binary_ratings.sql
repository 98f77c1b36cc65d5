{{ config(incremental_by_prompt()) -}}
{{ load_prompt_dependencies() -}}
-- Per judge x dimension x prompt, each distinct pair of normalised scores
-- (judge, human; human null when the rating's completion has no human score) of
-- the positive frame with the ratings that have it: agreement_binary's input (the
-- Rogan-Gladen pass rate uses the unlabelled ratings too) and agreement_judge_human's
-- (which leaves out the rows without a human score).
with

scored as (
    select
        judge,
        dimension,
        prompt_id,
        judge_score_norm,
        human_score_norm
    from {{ ref('fct_judge_ratings') }}
    where
        framing = 'positive'
        and judge_score_norm is not null{% if is_incremental() %}
        and {{ load_prompt_condition() }}{% endif %}
),

final as (
    select
        judge,
        dimension,
        prompt_id,
        judge_score_norm,
        human_score_norm,
        count(*) as n_rows
    from scored
    group by judge, dimension, prompt_id, judge_score_norm, human_score_norm
)

select * from final
