{{ config(enabled=incremental_on(), materialized='view') }}
-- The fact rows the build's load recomputed (docs/incremental.md, "The facts: by
-- prompt"): the rows of fct_judge_ratings that load_prompt_condition, with run_id,
-- selects, as the model's pre-hook deleted and its insert wrote them. An incremental
-- build validates the facts on these rows (judge_bias.warehouse.validation.load_scope,
-- by their source_row_number), so Python does not restate the macro's condition.
select *
from {{ ref('fct_judge_ratings') }}
where {{ load_prompt_condition('prompt_id', 'run_id') }}
