{{ config(incremental_by_prompt(none, 'item', 'items')) -}}
{{ load_prompt_dependencies() -}}
-- The item model's count cells: rows per (dimension, grader, model, prompt,
-- score); the prompt is the item. Only the items model reads it: built empty
-- (its columns, no rows) when items is not fitted (glm_input_needed;
-- int_glm_results says so if items is asked for later without a rebuild), on
-- the incremental path too (a load that fits items after one that did not
-- recomputes every prompt: int_load_scope's fact_vars; while items is not
-- fitted the pre-hook deletes every row, those a plain dbt run between loads
-- wrote too: delete_load_prompts).
select
    dimension,
    grader,
    grader_type,
    model,
    prompt_id as item,
    score,
    count(*) as n
from {{ ref('int_glm_ratings') }}
where on_scale{% if not glm_input_needed(['items']) %}
    and false{% endif %}{% if is_incremental() %}
    and {{ load_prompt_condition() }}{% endif %}
group by dimension, grader, grader_type, model, prompt_id, score
