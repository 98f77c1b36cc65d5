{{ config(enabled=incremental_on()) }}
-- The prompts the build's load touched (docs/incremental.md, "The facts: by
-- prompt"): every prompt_id, as staging cleans it, of the load's prompts,
-- completions and human_annotations rows (run_id null: every rating of the prompt
-- is recomputed), and every prompt_id and run_id of its judge_ratings rows (only
-- that run's ratings of the prompt are: a rating's checks and fact row read no
-- other run). A re-sent row replaced an earlier one of the same key, hence of the
-- same prompt (and run).
with

-- the load's id, found once (without the var: a scan of the inputs' load columns)
load as (
    select {{ current_load_id() }} as load_id
),

touched as (
    {%- for kind in ['prompts', 'completions', 'human_annotations'] %}
        select
            {{ clean_text('prompt_id') }} as prompt_id,
            cast(null as varchar) as run_id
        from {{ input_table(kind) }}
        where _load_id = (select load.load_id from load)
        union
    {%- endfor %}
    select
        {{ clean_text('prompt_id') }} as prompt_id,
        coalesce({{ clean_text('run_id') }}, '1') as run_id
    from {{ input_table('judge_ratings') }}
    where _load_id = (select load.load_id from load)
)

select distinct
    prompt_id,
    run_id
from touched
where prompt_id is not null
