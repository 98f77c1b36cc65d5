{% macro input_relation_kinds() -%}
    {#- The input kinds read from relations (the source judge_bias_inputs), in
        contract order: the var judge_bias_input_relations ('' or []: none, the file
        route; all; a list of kinds or their comma-separated names). The loaders
        check the value and name what is wrong (judge_bias.inputs.relations). -#}
    {%- set value = var('judge_bias_input_relations', '') -%}
    {%- set all_kinds = checked_inputs().keys() | list -%}
    {%- if value is none -%}
        {%- set value = [] -%}
    {%- elif value is string -%}
        {%- set value = value.split(',') -%}
    {%- endif -%}
    {%- set kinds = value | map('string') | map('trim') | reject('equalto', '') | list -%}
    {%- if kinds | map('lower') | list == ['all'] -%}
        {{ return(all_kinds) }}
    {%- endif -%}
    {{ return(all_kinds | select('in', kinds) | list) }}
{%- endmacro %}

{% macro input_rows_read(kind) -%}
    {#- The rows read of an input kind, for input_row_counts: on the relation route a
        plain count(*) of the relation itself (stg_inputs__relation_counts), so that
        the loader's rows reconcile with it; else, and on an incremental build (the
        totals of every load, as for files: each load's rows reconcile with the
        relation in stg_inputs__relation_counts' test), the rows of the loader's
        table (the file's records). -#}
    {%- if kind in input_relation_kinds() and not incremental_on() -%}
        (
            select relation.rows_in_relation
            from {{ ref('stg_inputs__relation_counts') }} as relation
            where relation.source = '{{ kind }}'
        )
    {%- else -%}
        (select count(*) from {{ input_table(kind) }})
    {%- endif -%}
{%- endmacro %}

{% macro input_noun() -%}
    {#- What an input kind is in the reasons of rejected_rows: a relation on the
        relation route ("not in the models relation"), a file otherwise. -#}
    {{ return('relation' if input_relation_kinds() else 'file') }}
{%- endmacro %}
