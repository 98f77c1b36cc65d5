{{ config(incremental_by_prompt()) -}}
{{ config(enabled=incremental_on()) -}}
{{ load_prompt_dependencies() -}}
-- Incremental warehouses only (docs/incremental.md): int_bias_cell_stats' moments
-- per cell and prompt, kept across loads and recomputed for the prompts the load
-- touched (a whole prompt: a new run changes its llm_reference rows, the family
-- means of its completions); int_bias_cell_stats sums them over the prompts.
-- Every row of int_bias_ratings is within one prompt (its human reference, length
-- feature and family means are the prompt's), so the sums equal one pass.
select
    {{ bias_stat_keys() | join(',\n    ') }},
    length_feature is not null as has_length,
    prompt_id,
    {{ bias_moment_sums('rating', 'reference', 'coalesce(length_feature, 0)') }}
from {{ ref('int_bias_ratings') }}
{%- if is_incremental() %}
    where {{ load_prompt_condition() }}
{%- endif %}
group by
    {{ bias_stat_keys() | join(',\n    ') }},
    length_feature is not null,
    prompt_id
