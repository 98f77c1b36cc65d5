{% macro record_last_run() -%}
    {#- on-run-start hook: one row naming this dbt invocation, replaced by every
        command that rebuilds tables. judge-bias stores the invocation id in its
        validation record, so a record older than the warehouse's tables (a
        plain `dbt build` after the last validation) is detected as stale. -#}
    {%- if execute and flags.WHICH in ('build', 'run', 'seed', 'snapshot') -%}
        {%- set loader = graph.nodes.get('model.judge_bias.base_inputs__judge_ratings', {}) -%}
        {%- set data_dir = (loader.get('config', {}).get('data_dir') or '') | string -%}
        {{ create_or_replace_table_as(target.schema ~ '.dbt_last_run') }}
        select
            '{{ invocation_id }}' as invocation_id,
            '{{ flags.WHICH }}' as command,
            cast('{{ run_started_at.isoformat() }}' as {{ timestamp_tz_type() }}) as started_at,
            '{{ data_dir | replace("'", "''") }}' as data_dir
    {%- else -%}
        select 1
    {%- endif %}
{%- endmacro %}

{% macro create_or_replace_table_as(relation_name) -%}
    {{ return(adapter.dispatch('create_or_replace_table_as', 'judge_bias')(relation_name)) }}
{%- endmacro %}

{% macro default__create_or_replace_table_as(relation_name) -%}
    create or replace table {{ relation_name }} as
{%- endmacro %}

{% macro spark__create_or_replace_table_as(relation_name) -%}
    {#- Spark replaces only v2 (e.g. Delta) tables: drop, then create -#}
    {%- do run_query('drop table if exists ' ~ relation_name) -%}
    create table {{ relation_name }} as
{%- endmacro %}

{% macro timestamp_tz_type() -%}
    {{ return(adapter.dispatch('timestamp_tz_type', 'judge_bias')()) }}
{%- endmacro %}

{% macro default__timestamp_tz_type() -%}
    timestamptz
{%- endmacro %}

{% macro spark__timestamp_tz_type() -%}
    timestamp
{%- endmacro %}
