-- Each judge score minus the judge's estimated self-bias on its own model's
-- completions and its family-bias on its family's other models (main fit).
-- A bias the data could not identify is not subtracted (debias_applied says).
-- A view on DuckDB (issue 34): one row per rating, 17 columns, every row changed
-- whenever the main fit's estimates change (each build, each append), so a table
-- wrote 10M rows for three readers that each join a few estimates to the fact
-- (debiased_leaderboard, the validation's sample, the BI snapshot, where it is a view
-- over the snapshot's own tables); a table on Spark, where a view is its query run again by every reader.
{{ config(materialized=('table' if target.type == 'spark' else 'view')) }}
with

ratings as (
    select * from {{ ref('fct_judge_ratings') }}
),

main_terms as (
    select * from {{ ref('bias_estimates') }}
    where analysis = 'main' and slice = 'all'
),

self_bias as (
    select
        judge,
        estimate as self_bias
    from main_terms
    where term_type = 'self'
),

family_bias as (
    select
        family,
        estimate as family_bias
    from main_terms
    where term_type = 'family'
),

joined as (
    select
        ratings.*,
        case
            when ratings.is_self then self_bias.self_bias
            when ratings.is_same_family then family_bias.family_bias
            else 0
        end as bias_removed
    from ratings
    left join self_bias
        on ratings.judge = self_bias.judge
    left join family_bias
        on ratings.judge_family = family_bias.family
),

final as (
    select
        judge,
        judge_family,
        model,
        model_family,
        prompt_id,
        dataset,
        task_type,
        dimension,
        framing,
        run_id,
        is_self,
        is_same_family,
        judge_score_norm,
        human_score_norm,
        bias_removed,
        judge_score_norm - coalesce(bias_removed, 0) as debiased_score_norm,
        bias_removed is not null as debias_applied
    from joined
)

select * from final
