-- Every perturbation_judgments row, resolved to the canonical judge, with the
-- reason when it is rejected.
with

judgments as (
    select * from {{ ref('stg_inputs__perturbation_judgments') }}
),

aliases as (
    select * from {{ ref('int_model_aliases') }}
),

judge_names as (
    {{ name_lookup('judgments', 'judge_alias', 'judge', 'judge_family') }}
),

joined as (
    select
        {{ star_except('judgments', ['reject_code', 'reject_reason']) }},
        judgments.reject_code as staging_reject_code,
        judgments.reject_reason as staging_reject_reason,
        judge_names.judge,
        judge_names.judge_family
    from judgments
    left join judge_names
        on judgments.judge_alias is not distinct from judge_names.judge_alias
),

checked as (
    select
        *,
        {{ reject_columns(
            [unknown_model_check('judge', 'judge', 'judge_alias')],
            keep_staging_reason=true,
        ) }}
    from joined
),

final as (
    {{ flag_duplicates(
        'checked',
        ['judge', 'item_id', 'bias_type', 'condition', 'run_id'],
        'judge, item_id, bias_type, condition and run_id',
    ) }}
)

select * from final
