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
