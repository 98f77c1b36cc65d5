{{ config(incremental_by_prompt()) -}}
{{ load_prompt_dependencies() -}}
-- One row per judge x framing x (prompt, dimension) on which the judge scored
-- its own model's completion: S (that score), R (mean score the other judges
-- gave the same completion under the positive frame) and G (mean score the
-- judge gave the other models' completions of the item under the frame). Runs
-- are averaged first. self_vs_peer_tests runs the t-tests on it.
with

-- each rating's score, runs averaged (macros/run_means.sql)
{{ run_means(
    'scored',
    ref('fct_judge_ratings'),
    ['judge', 'framing', 'prompt_id', 'model', 'dimension'],
    {'score': 'judge_score_norm'},
    where='judge_score_norm is not null'
    ~ (' and ' ~ load_prompt_condition() if is_incremental() else ''),
) }},

-- S and G from one aggregation per judge x framing x item (S: the judge's one own
-- score; G: the mean over the other models), R from one per model x item over the
-- other judges' positive-frame scores: no join of the scores to themselves
given as (
    select
        judge,
        framing,
        prompt_id,
        dimension,
        max(case when judge = model then score end) as s,
        avg(case when judge != model then score end) as g
    from scored
    group by judge, framing, prompt_id, dimension
),

received as (
    select
        model,
        prompt_id,
        dimension,
        avg(score) as r
    from scored
    where framing = 'positive' and judge != model
    group by model, prompt_id, dimension
),

final as (
    select
        given.judge,
        given.framing,
        given.prompt_id,
        given.dimension,
        given.s,
        received.r,
        given.g
    from given
    inner join received
        on
            given.judge = received.model
            and given.prompt_id = received.prompt_id
            and given.dimension = received.dimension
    where given.s is not null and given.g is not null
)

select * from final
