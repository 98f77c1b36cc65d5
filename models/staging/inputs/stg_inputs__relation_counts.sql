-- The relation route (docs/dbt-package.md): a plain count(*) of each relation the
-- loaders read, taken apart from them; input_row_counts reports it as rows_read, so
-- the rows the loader kept must reconcile with the relation itself. No row on the
-- file route. DuckDB only, as the loaders (on Spark the inputs are files).
{{ config(enabled=target.type != 'spark') }}
{% set kinds = input_relation_kinds() %}
with

{% for kind in kinds %}
    {{ kind }} as (
        select
            '{{ kind }}' as source,
            count(*) as rows_in_relation
        from {{ source('judge_bias_inputs', kind) }}
    ),
{% endfor %}

final as (
    {% for kind in kinds %}
        select * from {{ kind }}
        union all
    {% endfor %}
    select
        cast(null as {{ string_type() }}) as source,
        cast(null as bigint) as rows_in_relation
    where false
)

select * from final
