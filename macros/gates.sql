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

{% macro current_load_id() -%}
    {#- This build's load id on an incremental build (docs/incremental.md): the var
        judge_bias_load_id, else the run's start time, as the loaders write it in
        _load_id (dbt_project.yml's +load_id; judge_bias.inputs.loads.as_load
        strips quotes) -#}
    {{ return(var('judge_bias_load_id', run_started_at.strftime('%Y%m%dT%H%M%S.%fZ')) | string | replace("'", "")) }}
{%- endmacro %}
