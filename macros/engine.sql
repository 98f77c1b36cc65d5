{#- SQL that differs between DuckDB and Spark SQL, behind adapter.dispatch
    (docs/spark.md lists every construct). default__ is DuckDB's spelling. -#}

{% macro sql_string(text) -%}
    {{ return(adapter.dispatch('sql_string', 'judge_bias')(text)) }}
{%- endmacro %}

{% macro default__sql_string(text) -%}
    '{{ text | replace("'", "''") }}'
{%- endmacro %}

{% macro spark__sql_string(text) -%}
    {#- Spark SQL string literals treat a backslash as an escape character -#}
    '{{ text | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}

{% macro regex_replace_all(expression, pattern, replacement) -%}
    {{ return(adapter.dispatch('regex_replace_all', 'judge_bias')(expression, pattern, replacement)) }}
{%- endmacro %}

{% macro default__regex_replace_all(expression, pattern, replacement) -%}
    regexp_replace({{ expression }}, {{ sql_string(pattern) }}, {{ sql_string(replacement) }}, 'g')
{%- endmacro %}

{% macro spark__regex_replace_all(expression, pattern, replacement) -%}
    {#- Java's replacement string names a group $1, RE2's \1 -#}
    regexp_replace({{ expression }}, {{ sql_string(pattern) }}, {{ sql_string(replacement | replace('\\1', '$1')) }})
{%- endmacro %}

{% macro regex_full_match(expression, pattern) -%}
    {{ return(adapter.dispatch('regex_full_match', 'judge_bias')(expression, pattern)) }}
{%- endmacro %}

{% macro default__regex_full_match(expression, pattern) -%}
    regexp_full_match({{ expression }}, {{ sql_string(pattern) }})
{%- endmacro %}

{% macro spark__regex_full_match(expression, pattern) -%}
    {#- \z: the very end (Java's $ also matches before a final line break) -#}
    ({{ expression }} rlike {{ sql_string('^(?:' ~ pattern ~ ')\\z') }})
{%- endmacro %}

{% macro try_cast_boolean(expression) -%}
    {{ return(adapter.dispatch('try_cast_boolean', 'judge_bias')(expression)) }}
{%- endmacro %}

{% macro default__try_cast_boolean(expression) -%}
    try_cast({{ expression }} as boolean)
{%- endmacro %}

{% macro spark__try_cast_boolean(expression) -%}
    {#- DuckDB's spellings exactly (case-insensitive, no surrounding spaces):
        Spark's cast also takes spaces around them -#}
    case
        when lower({{ expression }}) in ('true', 't', '1', 'yes', 'y') then true
        when lower({{ expression }}) in ('false', 'f', '0', 'no', 'n') then false
    end
{%- endmacro %}

{% macro is_finite(expression) -%}
    {{ return(adapter.dispatch('is_finite', 'judge_bias')(expression)) }}
{%- endmacro %}

{% macro default__is_finite(expression) -%}
    isfinite({{ expression }})
{%- endmacro %}

{% macro spark__is_finite(expression) -%}
    (not (isnan({{ expression }}) or abs({{ expression }}) = double('infinity')))
{%- endmacro %}

{% macro ordered_string_agg(expression, separator, order_by, where=none) -%}
    {{ return(adapter.dispatch('ordered_string_agg', 'judge_bias')(expression, separator, order_by, where)) }}
{%- endmacro %}

{% macro default__ordered_string_agg(expression, separator, order_by, where=none) -%}
    string_agg({{ expression }}, {{ sql_string(separator) }} order by {{ order_by }})
    {%- if where %} filter (where {{ where }}){% endif %}
{%- endmacro %}

{% macro spark__ordered_string_agg(expression, separator, order_by, where=none) -%}
    {#- The values sorted as structs (each key preceded by `key is null`: DuckDB
        sorts nulls last), then joined; nulls skipped as string_agg skips them,
        and null (not '') when no value is left, as string_agg gives.
        Not listagg ... within group: Spark 4.3 fails on it beside a
        count(distinct ...) in the same select (ClassCastException). -#}
    {%- set keys = order_by.split(',') | map('trim') | list -%}
    {%- set filter = ' filter (where ' ~ where ~ ')' if where else '' -%}
    case when count({{ expression }}){{ filter }} > 0 then
    array_join(transform(array_sort(collect_list(named_struct(
        {%- for key in keys %}
        'n{{ loop.index }}', {{ key }} is null, 'k{{ loop.index }}', {{ key }},
        {%- endfor %}
        'v', {{ expression }}
    )){{ filter }}), x -> x.v), {{ sql_string(separator) }})
    end
{%- endmacro %}

{% macro first_by(expression, keys) -%}
    {{ return(adapter.dispatch('first_by', 'judge_bias')(expression, keys)) }}
{%- endmacro %}

{% macro default__first_by(expression, keys) -%}
    arg_min({{ expression }}, {% if keys | length == 1 %}{{ keys[0] }}{% else %}({{ keys | join(', ') }}){% endif %})
{%- endmacro %}

{% macro spark__first_by(expression, keys) -%}
    min_by({{ expression }}, {% if keys | length == 1 %}{{ keys[0] }}{% else %}struct({{ keys | join(', ') }}){% endif %})
{%- endmacro %}

{% macro star_except(prefix, columns) -%}
    {{ return(adapter.dispatch('star_except', 'judge_bias')(prefix, columns)) }}
{%- endmacro %}

{% macro default__star_except(prefix, columns) -%}
    {{ prefix ~ '.' if prefix }}* exclude ({{ columns | join(', ') }})
{%- endmacro %}

{% macro spark__star_except(prefix, columns) -%}
    {{ prefix ~ '.' if prefix }}* except ({{ columns | join(', ') }})
{%- endmacro %}

{% macro input_table(kind) -%}
    {{ return(adapter.dispatch('input_table', 'judge_bias')(kind)) }}
{%- endmacro %}

{% macro default__input_table(kind) -%}
    {{ return(ref('base_inputs__' ~ kind)) }}
{%- endmacro %}

{% macro spark__input_table(kind) -%}
    {#- On Spark the loaders are not dbt models (dbt-spark runs no Python model in
        session mode): judge_bias.inputs.spark_loading writes these tables first -#}
    {{ return(source('spark_inputs', 'base_inputs__' ~ kind)) }}
{%- endmacro %}

{% macro regex_count_matches(expression, pattern) -%}
    {{ return(adapter.dispatch('regex_count_matches', 'judge_bias')(expression, pattern)) }}
{%- endmacro %}

{% macro default__regex_count_matches(expression, pattern) -%}
    len(regexp_extract_all({{ expression }}, {{ sql_string(pattern) }}))
{%- endmacro %}

{% macro spark__regex_count_matches(expression, pattern) -%}
    {#- group 0: the whole match (Spark's default is group 1) -#}
    size(regexp_extract_all({{ expression }}, {{ sql_string(pattern) }}, 0))
{%- endmacro %}

{% macro json_array_text(expressions) -%}
    {{ return(adapter.dispatch('json_array_text', 'judge_bias')(expressions)) }}
{%- endmacro %}

{% macro default__json_array_text(expressions) -%}
    cast(to_json([
        {{ expressions | join(',\n        ') }}
    ]) as varchar)
{%- endmacro %}

{% macro spark__json_array_text(expressions) -%}
    to_json(array({{ expressions | join(', ') }}))
{%- endmacro %}

{% macro json_text_value(expression) -%}
    {{ return(adapter.dispatch('json_text_value', 'judge_bias')(expression)) }}
{%- endmacro %}

{% macro default__json_text_value(expression) -%}
    to_json({{ expression }})
{%- endmacro %}

{% macro spark__json_text_value(expression) -%}
    {#- Spark's to_json takes only structs, maps and arrays: the one-element array's
        text without its brackets -#}
    regexp_extract(to_json(array({{ expression }})), '^\\[(.*)\\]$', 1)
{%- endmacro %}

{% macro json_object_of(columns, alias) -%}
    {{ return(adapter.dispatch('json_object_of', 'judge_bias')(columns, alias)) }}
{%- endmacro %}

{% macro default__json_object_of(columns, alias) -%}
    json_object(
    {%- for name in columns %}
        '{{ name | replace("'", "''") }}', {{ alias }}."{{ name | replace('"', '""') }}"{{ "," if not loop.last }}
    {%- endfor %}
    )
{%- endmacro %}

{% macro spark__json_object_of(columns, alias) -%}
    {#- nulls kept as JSON null, as json_object keeps them -#}
    to_json(named_struct(
    {%- for name in columns %}
        {{ sql_string(name) }}, {{ alias }}.`{{ name | replace('`', '``') }}`{{ "," if not loop.last }}
    {%- endfor %}
    ), map('ignoreNullFields', 'false'))
{%- endmacro %}

{% macro json_null() -%}
    {{ return(adapter.dispatch('json_null', 'judge_bias')()) }}
{%- endmacro %}

{% macro default__json_null() -%}
    cast(null as json)
{%- endmacro %}

{% macro spark__json_null() -%}
    cast(null as string)
{%- endmacro %}

{% macro string_type() -%}
    {{ return(adapter.dispatch('string_type', 'judge_bias')()) }}
{%- endmacro %}

{% macro default__string_type() -%}
    varchar
{%- endmacro %}

{% macro spark__string_type() -%}
    {#- Spark's varchar needs a length; string is its unbounded text -#}
    string
{%- endmacro %}

{% macro ieee_divide(numerator, denominator) -%}
    {{ return(adapter.dispatch('ieee_divide', 'judge_bias')(numerator, denominator)) }}
{%- endmacro %}

{% macro default__ieee_divide(numerator, denominator) -%}
    {#- DuckDB 2.0 divides doubles as IEEE 754 does: x / 0 is inf, -inf or NaN -#}
    ({{ numerator }}) / ({{ denominator }})
{%- endmacro %}

{% macro spark__ieee_divide(numerator, denominator) -%}
    {#- Spark (ANSI mode, its default) raises on x / 0: give DuckDB's IEEE values
        instead (x * inf is inf, -inf, NaN for x = 0 or NaN, null for null) -#}
    case
        when ({{ denominator }}) = 0 then ({{ numerator }}) * double('infinity')
        else ({{ numerator }}) / ({{ denominator }})
    end
{%- endmacro %}

{% macro not_materialized() -%}
    {#- A CTE read twice is inlined into each reader instead of being written out
        whole (DuckDB materialises such a CTE by default: every row and column in
        its buffer, spilling past memory_limit); each reader then scans only the
        columns it needs. Spark SQL inlines CTEs and has no such keyword. -#}
    {{ return(adapter.dispatch('not_materialized', 'judge_bias')()) }}
{%- endmacro %}

{% macro default__not_materialized() -%}
    not materialized
{%- endmacro %}

{% macro spark__not_materialized() -%}
{%- endmacro %}

{% macro row_key_hash(columns) -%}
    {#- A 64-bit hash of a row's key columns (nulls hash too), to find the few keys
        that repeat by one narrow aggregation on a number instead of on the key's
        strings: a collision only makes a key a candidate, so a model using it
        checks candidates on the key itself. DuckDB's hash, Spark's xxhash64. -#}
    {{ return(adapter.dispatch('row_key_hash', 'judge_bias')(columns)) }}
{%- endmacro %}

{% macro default__row_key_hash(columns) -%}
    hash({{ columns | join(', ') }})
{%- endmacro %}

{% macro spark__row_key_hash(columns) -%}
    xxhash64({{ columns | join(', ') }})
{%- endmacro %}
