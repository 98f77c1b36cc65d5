{{ config(enabled=incremental_on()) }}
-- The prompts the build's load touched (docs/incremental.md, "The facts: by
-- prompt"): every prompt_id, as staging cleans it, of the load's prompts,
-- completions, human_annotations and judge_ratings rows. A re-sent row replaced
-- an earlier one of the same key, hence of the same prompt.
with

touched as (
    {%- for kind in prompt_kinds() %}
        select {{ clean_text('prompt_id') }} as prompt_id
        from {{ input_table(kind) }}
        where _load_id = {{ current_load_id() }}
        {%- if not loop.last %}
            union
        {%- endif %}
    {%- endfor %}
)

select distinct prompt_id
from touched
where prompt_id is not null
