{{ config(incremental_by_prompt('run_id')) -}}
{{ config(enabled=incremental_on()) -}}
{{ load_prompt_dependencies() -}}
-- Incremental warehouses only (docs/incremental.md): the moments of the human
-- reference rows of int_bias_cell_stats per cell, prompt and run, kept across
-- loads and recomputed for the prompts and runs the load touched (a rating's
-- human reference and length feature are its completion's, so a new run changes
-- no other run's rows). int_bias_cell_stats sums them over prompts and runs, and
-- derives the llm_reference cells from them (the family means of a completion
-- and the moments without the reference), so a new run recomputes 1% of the rows
-- here, not the half of the prompts it names.
select
    {{ bias_stat_keys()[2:] | join(',\n    ') }},
    length_feature is not null as has_length,
    prompt_id,
    run_id,
    {{ bias_moment_sums('rating', 'reference', 'coalesce(length_feature, 0)') }}
from {{ ref('int_bias_ratings') }}
where
    reference_kind = 'human'
{%- if is_incremental() %}
    and {{ load_prompt_condition('prompt_id', 'run_id') }}
{%- endif %}
group by
    {{ bias_stat_keys()[2:] | join(',\n    ') }},
    length_feature is not null,
    prompt_id,
    run_id
