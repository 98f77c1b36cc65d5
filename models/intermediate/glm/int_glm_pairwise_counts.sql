-- The pairwise likelihood's count cells: accepted first/second verdicts per
-- (grader, ordered pair, length difference, first chosen). The length
-- difference is the input's length_diff column when the file has one (HiBayes
-- imports; staged in stg_inputs__pairwise_judgments), else length_first -
-- length_second from completions. The human verdicts (human_verdict column)
-- enter as one more grader, `human` of type human: one verdict per shown
-- (prompt, first, second, run) and verdict, however many judge rows repeat it.
with

verdicts as (
    select * from {{ ref('int_pairwise_checked') }}
    where reject_code is null
),

judge_verdicts as (
    select
        judge as grader,
        'llm' as grader_type,
        model_first,
        model_second,
        coalesce(length_diff, length_first - length_second) as length_diff,
        case when verdict = 'first' then 1 else 0 end as first_chosen
    from verdicts
    where verdict in ('first', 'second')
),

human_verdicts as (
    select distinct
        prompt_id,
        model_first,
        model_second,
        run_id,
        human_verdict,
        coalesce(length_diff, length_first - length_second) as length_diff
    from verdicts
    where human_verdict in ('first', 'second')
),

final as (
    select
        grader,
        grader_type,
        model_first,
        model_second,
        length_diff,
        first_chosen,
        count(*) as n
    from judge_verdicts
    group by all
    union all
    select
        'human' as grader,
        'human' as grader_type,
        model_first,
        model_second,
        length_diff,
        case when human_verdict = 'first' then 1 else 0 end as first_chosen,
        count(*) as n
    from human_verdicts
    group by all
)

select * from final
