{{ config(materialized='view', enabled=incremental_on()) -}}
-- Incremental warehouses only (docs/incremental.md): the cells of
-- int_bias_cell_stats from int_bias_cell_prompt_moments, the human cells' moments
-- per prompt and run. The human cells are their sums. An llm_reference row's
-- reference is the family's mean rating of its completion (int_bias_ratings'
-- family_reference), constant within a cell and prompt, so an llm_reference cell
-- is the sum over prompts of the reference's powers times the human cell's
-- moments without the reference (as int_bias_prompt_stats at degree 2): no pass
-- over the ratings, whose moments are kept by prompt and run.
{%- set keys = bias_stat_keys()[2:] %}
{%- set without_reference = [] %}
{%- for name in bias_moment_names() if name[5] == '0' %}
    {%- do without_reference.append('sum(' ~ name ~ ') as ' ~ name) %}
{%- endfor %}
with

human as (
    select * from {{ ref('int_bias_cell_prompt_moments') }}
),

-- per cell and prompt, the moments without the reference, runs summed
prompt_moments as (
    select
        {{ keys | join(',\n        ') }},
        has_length,
        prompt_id,
        {{ without_reference | join(',\n        ') }}
    from human
    group by
        {{ keys | join(',\n        ') }},
        has_length,
        prompt_id
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
        prompt_moments.{{ key }},
    {%- endfor %}
    prompt_moments.has_length,
    {{ bias_reference_moment_totals('prompt_moments', 'family_reference.reference') }}
from prompt_moments
{{ family_reference_join('prompt_moments') }}
group by
    family_reference.reference_family,
    {%- for key in keys %}
        prompt_moments.{{ key }},
    {%- endfor %}
    prompt_moments.has_length
