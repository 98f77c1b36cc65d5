{% macro reject_columns(checks, keep_staging_reason=false) -%}
    {#- Two columns, reject_code and reject_reason, from the first check that fails.
        checks: a list of (condition SQL, code, reason SQL expression); a row that
        meets no condition is accepted (both columns null). keep_staging_reason:
        a reason already in staging_reject_code/_reason comes first. -#}
    case
    {%- if keep_staging_reason %}
        when staging_reject_code is not null then staging_reject_code
    {%- endif %}
    {%- for condition, code, reason in checks %}
        when {{ condition }} then '{{ code }}'
    {%- endfor %}
    end as reject_code,
    case
    {%- if keep_staging_reason %}
        when staging_reject_code is not null then staging_reject_reason
    {%- endif %}
    {%- for condition, code, reason in checks %}
        when {{ condition }} then {{ reason }}
    {%- endfor %}
    end as reject_reason
{%- endmacro %}

{% macro missing_value_checks(columns) -%}
    {#- One missing_value check per required column, in the given order.
        columns: a list of input column names, or of (input name, staged column) pairs. -#}
    {%- set checks = [] -%}
    {%- for col in columns -%}
        {%- set name, expr = (col, col) if col is string else col -%}
        {%- do checks.append((expr ~ " is null", "missing_value", "'" ~ name ~ " is empty'")) -%}
    {%- endfor -%}
    {{ return(checks) }}
{%- endmacro %}

{% macro parse_error_check() -%}
    {{ return(("parse_error is not null", "malformed_row", "'malformed CSV record: ' || parse_error")) }}
{%- endmacro %}

{% macro flag_duplicates(relation, key_columns, key_description) -%}
    {#- Select everything from relation (a CTE name), rejecting as duplicate_key every
        otherwise accepted row whose key repeats an earlier accepted row's key.
        The first row (lowest row_number) is kept; the reason names it. -#}
    select
        * exclude (_first_row, reject_code, reject_reason),
        coalesce(
            reject_code,
            case when row_number <> _first_row then 'duplicate_key' end
        ) as reject_code,
        coalesce(
            reject_reason,
            case
                when row_number <> _first_row
                    then 'duplicate key: same {{ key_description }} as row ' || _first_row
            end
        ) as reject_reason
    from (
        select
            *,
            min(row_number) over (
                partition by reject_code is null, {{ key_columns | join(', ') }}
            ) as _first_row
        from {{ relation }}
    )
{%- endmacro %}
