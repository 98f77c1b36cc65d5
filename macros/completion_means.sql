{% macro completion_means(relation, raters, score, mean_alias, where=none) -%}
    {#- The mean `score` of relation's rows per rater group and completion item
        (prompt_id, model, dimension): raters maps each output column to the
        relation's column it groups by (e.g. {'reference_family': 'judge_family'}:
        int_bias_ratings' and int_bias_prompt_stats' family reference;
        {'judge': 'judge', 'framing': 'framing'}: int_self_vs_peer_items' scores,
        runs averaged). where: an optional filter. -#}
select
    {%- for alias, column in raters.items() %}
    {{ column }}{{ ' as ' ~ alias if alias != column }},
    {%- endfor %}
    prompt_id,
    model,
    dimension,
    avg({{ score }}) as {{ mean_alias }}
from {{ relation }}
{%- if where %}
where {{ where }}
{%- endif %}
group by {{ raters.values() | join(', ') }}, prompt_id, model, dimension
{%- endmacro %}

{% macro family_reference_join(relation) -%}
    {#- The join of relation's rows (judge_family, model_family, prompt_id, model,
        dimension) to the `family_reference` CTE (completion_means per judge
        family) of every other family: the llm_reference rows leave the
        reference family's judgments and completions out. -#}
inner join family_reference
    on
        {{ relation }}.prompt_id = family_reference.prompt_id
        and {{ relation }}.model = family_reference.model
        and {{ relation }}.dimension = family_reference.dimension
        and {{ relation }}.judge_family != family_reference.reference_family
        and {{ relation }}.model_family != family_reference.reference_family
{%- endmacro %}
