{{ config(incremental_by_prompt(none, 'item')) -}}
{{ load_prompt_dependencies() -}}
-- The item model's count cells: rows per (dimension, grader, model, prompt,
-- score); the prompt is the item.
select
    dimension,
    grader,
    grader_type,
    model,
    prompt_id as item,
    score,
    count(*) as n
from {{ ref('int_glm_ratings') }}
where on_scale{% if is_incremental() %}
    and {{ load_prompt_condition() }}{% endif %}
group by dimension, grader, grader_type, model, prompt_id, score
