{{ config(materialized='view', enabled=incremental_on()) -}}
-- Incremental warehouses only (docs/incremental.md): the cells of
-- int_bias_cell_stats from int_bias_cell_prompt_moments, the human cells' moments
-- per prompt and run. The human cells are their sums. An llm_reference row's
-- reference is the family's mean rating of its completion (int_bias_ratings'
-- family_reference), constant within a cell and prompt, so an llm_reference cell
-- is the sum over prompts of the reference's powers times the human cell's
-- moments without the reference (as int_bias_prompt_stats at degree 2), here
-- per run (the reference is one value per cell and prompt, so per cell, prompt
-- and run too): no pass over the ratings, whose moments are kept by prompt and
-- run. The llm_reference cells still read every row of the moments: a new run
-- changes the family means of the completions it rates.
{%- set keys = bias_stat_keys()[2:] %}
with

human as (
    select * from {{ ref('int_bias_cell_prompt_moments') }}
),

-- the mean rating per judge family and completion, over the human rows
family_reference as (
    select
        judge_family as reference_family,
        prompt_id,
        model,
        dimension,
        sum(m_y1r0l0) / sum(m_y0r0l0) as reference
    from human
    group by judge_family, prompt_id, model, dimension
)

select
    'human' as reference_kind,
    cast(null as {{ string_type() }}) as reference_family,
    {{ keys | join(',\n    ') }},
    has_length,
    {{ bias_moment_totals() }}
from human
group by
    {{ keys | join(',\n    ') }},
    has_length
union all
select
    'llm' as reference_kind,
    family_reference.reference_family,
    {%- for key in keys %}
        human.{{ key }},
    {%- endfor %}
    human.has_length,
    {{ bias_reference_moment_totals('human', 'family_reference.reference') }}
from human
{{ family_reference_join('human') }}
group by
    family_reference.reference_family,
    {%- for key in keys %}
        human.{{ key }},
    {%- endfor %}
    human.has_length
