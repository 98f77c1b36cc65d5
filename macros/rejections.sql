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
    {#- malformed_row: a CSV record the parser could not split (its message), or on
        the relation route, which has no CSV record, a row whose watermark is null
        (the loader's words: judge_bias.inputs.relations.NULL_WATERMARK). -#}
    {%- set reason = "parse_error" if input_relation_kinds() else "'malformed CSV record: ' || parse_error" -%}
    {{ return(("parse_error is not null", "malformed_row", reason)) }}
{%- endmacro %}

{% macro flag_duplicates(relation, key_columns, key_description) -%}
    {#- Select everything from relation (a CTE name), rejecting as duplicate_key every
        otherwise accepted row whose key repeats an earlier accepted row's key.
        The first row (lowest row_number) is kept; the reason names it. The
        repeated keys are found by aggregation and joined back (a window over
        every row is several times slower on large inputs). The aggregation over
        every row groups one 64-bit hash of the key (row_key_hash), not the
        key's strings (10M ratings: 27 -> 12 s of operator time); the keys are
        grouped exactly over the rows whose hash repeats, so a collision only
        adds a candidate, and every repeated key is found (equal keys hash
        equal: the key columns are text, compared without a collation). -#}
    select
        {{ star_except(relation, ['reject_code', 'reject_reason']) }},
        coalesce(
            {{ relation }}.reject_code,
            case when {{ relation }}.row_number <> _repeated._first_row then 'duplicate_key' end
        ) as reject_code,
        coalesce(
            {{ relation }}.reject_reason,
            case
                when {{ relation }}.row_number <> _repeated._first_row
                    then 'duplicate key: same {{ key_description }} as row ' || _repeated._first_row
            end
        ) as reject_reason
    from {{ relation }}
    left join (
        select
            {{ key_columns | join(', ') }},
            min(row_number) as _first_row
        from {{ relation }}
        where
            reject_code is null
            and {{ row_key_hash(key_columns) }} in (
                select _key_hash from (
                    select {{ row_key_hash(key_columns) }} as _key_hash
                    from {{ relation }}
                    where reject_code is null
                ) as _hashes
                group by _key_hash
                having count(*) > 1
            )
        group by {{ key_columns | join(', ') }}
        having count(*) > 1
    ) as _repeated
        on
            {{ relation }}.reject_code is null
            {%- for col in key_columns %}
            and {{ relation }}.{{ col }} is not distinct from _repeated.{{ col }}
            {%- endfor %}
{%- endmacro %}

{% macro range_var(name) -%}
    {#- The [low, high] bounds of a range var (dbt_project.yml vars), checked. -#}
    {%- set bounds = var(name) -%}
    {%- if bounds is string or bounds | length != 2 or not bounds[0] < bounds[1] -%}
        {{ exceptions.raise_compiler_error(
            "dbt var " ~ name ~ " must be [low, high] with low < high, not " ~ bounds
        ) }}
    {%- endif -%}
    {{ return(bounds) }}
{%- endmacro %}

{% macro score_range_check(value, given, name) -%}
    {#- The check that a number read as a score lies inside the dbt var score_range
        (for scores no rating scale bounds). value: the number (null when absent);
        given: the text as given; name: the input column's name. NaN and infinities
        are outside every range. -#}
    {%- set low, high = range_var('score_range') -%}
    {{ return((
        value ~ ' is not null and not (' ~ value ~ ' between ' ~ low ~ ' and ' ~ high ~ ')',
        'score_out_of_range',
        "'" ~ name ~ " ''' || " ~ given ~ " || ''' is outside the score range [" ~ low
        ~ ", " ~ high ~ "] (dbt var score_range)'",
    )) }}
{%- endmacro %}

{% macro count_check(value, given, name, low, whole=true) -%}
    {#- The check that a count column holds a number between low and the dbt var
        max_count (invalid_value), a whole one unless whole is false. value: the
        number as double (null when it is not a number); given: the text as given,
        null when empty; name: the input column's name. -#}
    {%- set high = var('max_count') -%}
    {%- set condition = value ~ ' between ' ~ low ~ ' and ' ~ high
        ~ (' and ' ~ value ~ ' = floor(' ~ value ~ ')' if whole else '') -%}
    {{ return((
        given ~ ' is not null and coalesce(not (' ~ condition ~ '), true)',
        'invalid_value',
        "'" ~ name ~ " ''' || " ~ given ~ " || ''' is not a " ~ ('whole ' if whole else '')
        ~ "number between " ~ low ~ " and " ~ high ~ " (dbt var max_count)'",
    )) }}
{%- endmacro %}

{% macro reserved_name_check(column, pooled_rows) -%}
    {#- The check that a name is not `all` (case and whitespace insensitive): the
        marts label their pooled rows `all` (pooled_rows: which rows, for the
        reason), so a model or dimension of that name would be indistinguishable
        from them. -#}
    {{ return((
        text_key(column) ~ " = 'all'", 'invalid_value',
        "'" ~ column ~ " ''' || " ~ column ~ " || ''' is reserved: the marts label the rows pooling "
        ~ pooled_rows ~ " ''all''; rename it'"
    )) }}
{%- endmacro %}
