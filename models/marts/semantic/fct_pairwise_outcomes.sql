-- One row per model named in an accepted pairwise judgment: each judgment
-- (judge x prompt x ordered pair x run) gives two rows, one per slot, with
-- 0/1 flags of the judge's and the human's verdict for that model. The
-- additive grain of the semantic layer's win rates (models/semantic/): a win
-- rate is a sum of wins over a count of rows, for any slice.
with

judgments as (
    select
        row_number,
        judge,
        judge_family,
        prompt_id,
        model_first,
        model_first_family,
        model_second,
        model_second_family,
        verdict,
        human_verdict,
        run_id
    from {{ ref('int_pairwise_checked') }}
    where reject_code is null
),

prompts as (
    select
        prompt_id,
        dataset
    from {{ ref('int_prompts_checked') }}
    where reject_code is null
),

-- the two slots of each judgment, the model of the slot first
slots as (
    select
        row_number,
        'first' as slot,
        judge,
        judge_family,
        prompt_id,
        model_first as model,
        model_first_family as model_family,
        model_second as opponent,
        model_second_family as opponent_family,
        verdict,
        human_verdict,
        run_id
    from judgments
    union all
    select
        row_number,
        'second' as slot,
        judge,
        judge_family,
        prompt_id,
        model_second as model,
        model_second_family as model_family,
        model_first as opponent,
        model_first_family as opponent_family,
        verdict,
        human_verdict,
        run_id
    from judgments
),

final as (
    select
        cast(slots.row_number * 2 + case when slots.slot = 'second' then 1 else 0 end as bigint)
            as outcome_id,
        cast(slots.row_number as bigint) as source_row_number,
        slots.slot,
        slots.judge,
        slots.judge_family,
        slots.prompt_id,
        prompts.dataset,
        slots.model,
        slots.model_family,
        slots.opponent,
        slots.opponent_family,
        slots.run_id,
        slots.verdict,
        slots.human_verdict,
        slots.judge = slots.model as is_self,
        slots.judge = slots.opponent as is_opponent_self,
        slots.judge_family = slots.model_family
        and slots.judge <> slots.model as is_same_family,
        case when slots.verdict = slots.slot then 1 else 0 end as is_win,
        case when slots.verdict = 'tie' then 1 else 0 end as is_tie,
        case
            when slots.verdict in ('first', 'second') and slots.verdict <> slots.slot
                then 1
            else 0
        end as is_loss,
        case when slots.human_verdict is not null then 1 else 0 end as has_human_verdict,
        case when slots.human_verdict = slots.slot then 1 else 0 end as is_human_win,
        case when slots.human_verdict = 'tie' then 1 else 0 end as is_human_tie
    from slots
    left join prompts
        on slots.prompt_id = prompts.prompt_id
)

select * from final
