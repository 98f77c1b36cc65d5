{% macro share_var(name) -%}
    {#- A dbt var holding a share of rows (a number in [0, 1], e.g.
        max_rejected_share), as a SQL double literal; anything else stops the
        build at compile time with a message naming the var.
        name: the var's name (its default lives in dbt_project.yml's vars). -#}
    {%- set raw = var(name) -%}
    {%- set value = raw | float(-1.0) -%}
    {%- if raw is boolean or (raw | string | trim) == '' or value < 0 or value > 1 -%}
        {{ exceptions.raise_compiler_error(
            "var " ~ name ~ " must be a number between 0 and 1, got " ~ (raw | string)
        ) }}
    {%- endif -%}
    cast({{ value }} as double)
{%- endmacro %}

{% macro in_this_load(alias) -%}
    {#- SQL true for a base_inputs__<kind> row (table alias ``alias``) loaded by this
        dbt command: its _loaded_at (UTC, when the loader ran) is not before the
        command's start (run_started_at, UTC). Earlier loads ran in earlier commands.
        The loads' ids cannot tell: a plain dbt build's id is made by the loaders. -#}
    {{ alias }}._loaded_at >= cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp)
{%- endmacro %}

{% macro read_again(alias) -%}
    {#- SQL true for a base_inputs__<kind> row (table alias ``alias``) that is no new
        input of its load: a relation's row whose watermark is null, rejected by an
        earlier load with the same key and contract values (each rejected row
        matched once) and read again by this one (its reason ends with
        judge_bias.inputs.loads.READ_AGAIN). It stays in rejected_rows; the gates
        judge the load's other rows, so that one unfixed row does not fail every
        load of a quiet period. -#}
    coalesce({{ alias }}._parse_error, '') like '%; read again (an earlier load rejected it)'
{%- endmacro %}
