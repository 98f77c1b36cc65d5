{% macro run_means(name, relation, keys, scores, where=none, run_column='run_id') -%}
    {#- CTEs ending in `name`: one row per `keys` of relation's rows (filtered by
        where), each column of `scores` (output column -> the relation's column)
        averaged over the key's rows (its runs). The keys with run_column must be
        unique in the relation (fct_judge_ratings' key, less what `where` fixes):
        with one run among the rows (name_runs; a null run_column is a run of its
        own) every key is one row and the rows pass through as they are (the mean
        of one value is that value), without the hash of the key (10M ratings:
        3.2 -> 1.5 CPU s per model, 300 MB less).
        With several, the keys that repeat are found by one narrow count of a hash
        of the key (row_key_hash) and only their rows are grouped by the key; the
        others pass through. The same rows as grouping every row by the key, which
        cost most of the readers' time at 10M ratings (issue 34); a hash collision
        only sends a key that is not repeated through the grouping. Each route
        reads the rows, but only one route's rows pass its filter. -#}
{{ name }}_rows as {{ not_materialized() }} (
    select
        {%- for key in keys %}
        {{ key }},
        {%- endfor %}
        {%- for alias, column in scores.items() %}
        {{ column }}{{ ' as ' ~ alias if alias != column }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ relation }}
    {%- if where %}
    where {{ where }}
    {%- endif %}
),

-- a key with a null run and another run is grouped, as GROUP BY groups it
{{ name }}_runs as (
    select {{ count_runs(run_column) }} as n_runs
    from {{ relation }}
    {%- if where %}
    where {{ where }}
    {%- endif %}
),

-- the rows of several runs, each with the hash of its key (none with one run)
{{ name }}_hashed as {{ not_materialized() }} (
    select
        *,
        {{ row_key_hash(keys) }} as run_means_key
    from {{ name }}_rows
    where (select {{ name }}_runs.n_runs from {{ name }}_runs) > 1
),

{{ name }}_repeated as (
    select run_means_key
    from {{ name }}_hashed
    group by run_means_key
    having count(*) > 1
),

{{ name }} as (
    select
        {{ keys | join(',\n        ') }},
        {{ scores.keys() | join(',\n        ') }}
    from {{ name }}_rows
    where (select {{ name }}_runs.n_runs from {{ name }}_runs) <= 1
    union all
    select
        {{ keys | join(',\n        ') }},
        {{ scores.keys() | join(',\n        ') }}
    from {{ name }}_hashed
    where run_means_key not in (select run_means_key from {{ name }}_repeated)
    union all
    select
        {{ keys | join(',\n        ') }},
        {%- for alias in scores %}
        avg({{ alias }}) as {{ alias }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ name }}_hashed
    where run_means_key in (select run_means_key from {{ name }}_repeated)
    group by {{ keys | join(', ') }}
)
{%- endmacro %}

{% macro count_runs(run_column='run_id') -%}
    {#- The number of distinct runs among the rows, a null run_column one of them
        (count(distinct) alone skips it): run_means' and int_ppi_units' choice of
        the one-run route. Portable (DuckDB, Spark). -#}
    count(distinct {{ run_column }})
    + coalesce(max(case when {{ run_column }} is null then 1 else 0 end), 0)
{%- endmacro %}
