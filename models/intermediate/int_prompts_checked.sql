-- Every prompts row with its reject reason.
with

prompts as (
    select * from {{ ref('stg_inputs__prompts') }}
),

final as (
    {{ flag_duplicates('prompts', ['prompt_id'], 'prompt_id') }}
)

select * from final
