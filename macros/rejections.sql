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
        The first row (lowest row_number) is kept; the reason names it. The first
        row per key comes from a grouped aggregate joined back (a hash join), not a
        window over the wide rows, which is several times faster at a million rows. -#}
    select
        _rows.* exclude (reject_code, reject_reason),
        coalesce(
            _rows.reject_code,
            case when _rows.row_number <> _firsts._first_row then 'duplicate_key' end
        ) as reject_code,
        coalesce(
            _rows.reject_reason,
            case
                when _rows.row_number <> _firsts._first_row
                    then 'duplicate key: same {{ key_description }} as row ' || _firsts._first_row
            end
        ) as reject_reason
    from {{ relation }} as _rows
    left join (
        select
            {{ key_columns | join(', ') }},
            min(row_number) as _first_row
        from {{ relation }}
        where reject_code is null
        group by {{ key_columns | join(', ') }}
    ) as _firsts
        on
            _rows.reject_code is null
            {%- for col in key_columns %}
            and _rows.{{ col }} is not distinct from _firsts.{{ col }}
            {%- endfor %}
{%- endmacro %}
