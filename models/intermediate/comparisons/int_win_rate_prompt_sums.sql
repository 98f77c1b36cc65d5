-- The sums behind model_win_rates (python/judge_bias/comparisons/win_rates.py): per
-- judge x model x prompt, over the accepted pairwise judgments that hold the model
-- (in either slot), the judgments, the judge's wins (ties count one half) and, on
-- the judgments with a human verdict, the judge's wins and the human's wins. A
-- judgment counts once for each of its two models (the other's win is one minus
-- this one's). Per-prompt sums make the win rates' variance prompt-clustered: a
-- prompt's judgments (both orders, reruns, several opponents) share its content.
with

judgments as (
    select * from {{ ref('int_pairwise_checked') }}
    where reject_code is null
),

scored as (
    select
        judge,
        prompt_id,
        model_first,
        model_second,
        case verdict when 'first' then 1.0 when 'tie' then 0.5 when 'second' then 0.0 end
            as judge_first_win,
        case human_verdict
            when 'first' then 1.0 when 'tie' then 0.5 when 'second' then 0.0
        end as human_first_win
    from judgments
),

sides as (
    select
        judge,
        prompt_id,
        model_first as model,
        judge_first_win as judge_win,
        human_first_win as human_win
    from scored
    union all
    select
        judge,
        prompt_id,
        model_second as model,
        1.0 - judge_first_win as judge_win,
        1.0 - human_first_win as human_win
    from scored
),

final as (
    select
        judge,
        model,
        prompt_id,
        count(*) as n_judgments,
        sum(judge_win) as judge_wins,
        count(human_win) as n_with_human,
        coalesce(sum(case when human_win is not null then judge_win end), 0)
            as judge_wins_with_human,
        coalesce(sum(human_win), 0) as human_wins
    from sides
    group by judge, model, prompt_id
)

select * from final
