-- The relation route (docs/dbt-package.md): a plain count(*) of the rows of each
-- relation the loaders read, taken apart from them, beside the rows the loader
-- kept (rows_loaded); a test holds them equal. input_row_counts reports the count
-- as rows_read on a full build. An incremental load with a watermark column
-- (judge_bias_loaded_at_column, docs/incremental.md "Loads from relations")
-- counts the rows it selected: where the column is null or from the previous
-- loads' largest value (the load's _watermark_above; null: the first load) to the
-- largest value it selected (_watermark_through), less the rows at that start the
-- loader skipped as already loaded (_watermark_held: their key and watermark held
-- by the loads; a late row at it is counted), so that rows written while the
-- build runs are not counted (but a row written meanwhile at a value inside those
-- bounds, or null, is: the test then fails and the load is rolled back). No row on
-- the file route. DuckDB only, as the loaders (on Spark the inputs are files). A
-- table: a BI tool opening the warehouse alone cannot read a view over the team's
-- (attached) database. On an incremental build rows_loaded counts the rows of this
-- dbt command's load (in_this_load): the model rebuilt alone by a later command
-- reads 0 there, as the input_row_counts gate_* columns do.
{{ config(enabled=target.type != 'spark', materialized='table') }}
{% set kinds = input_relation_kinds() %}
{% set mark = var('judge_bias_loaded_at_column', '') | string | trim | lower %}
{#- quoted as the loader quotes it (a name with a space) -#}
{% set quoted = '"' ~ (mark | replace('"', '""')) ~ '"' %}
{% set incremental = incremental_on() %}
with

{% for kind in kinds %}
    {%- set watermarked = false -%}
    {%- if incremental and mark and execute -%}
        {#- the loader kept the load's start when the relation has the column -#}
        {%- set names = adapter.get_columns_in_relation(input_table(kind)) | map(attribute='name') | map('lower') | list -%}
        {%- set watermarked = '_watermark_through' in names -%}
    {%- endif %}
    {{ kind }}_loaded as (
        select
            count(*) as rows_loaded,
            {%- if watermarked %}
                any_value(base._watermark_above) as watermark_above,
                any_value(base._watermark_through) as watermark_through,
                any_value(base._watermark_held) as watermark_held
            {%- else %}
                null as watermark_above,
                null as watermark_through,
                0 as watermark_held
            {%- endif %}
        from {{ input_table(kind) }} as base
        {%- if incremental %}
            where {{ in_this_load('base') }}
        {%- endif %}
    ),

    {{ kind }} as (
        select
            '{{ kind }}' as source,
            count(*) - coalesce((select watermark_held from {{ kind }}_loaded), 0) as rows_in_relation,
            (select rows_loaded from {{ kind }}_loaded) as rows_loaded
        from {{ source('judge_bias_inputs', kind) }} as relation
        {%- if watermarked %}
            where
                relation.{{ quoted }} is null
                or (
                    (
                        (select watermark_above from {{ kind }}_loaded) is null
                        or relation.{{ quoted }} >= (select watermark_above from {{ kind }}_loaded)
                    )
                    and relation.{{ quoted }} <= (select watermark_through from {{ kind }}_loaded)
                )
        {%- endif %}
    ),
{% endfor %}

final as (
    {% for kind in kinds %}
        select * from {{ kind }}
        union all
    {% endfor %}
    select
        cast(null as {{ string_type() }}) as source,
        cast(null as bigint) as rows_in_relation,
        cast(null as bigint) as rows_loaded
    where false
)

select * from final
