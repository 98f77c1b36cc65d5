{% macro loader_columns(relation) -%}
    {#- The loader's bookkeeping columns of a base_inputs__<kind> table, renamed
        for staging: row_number, source_file, parse_error, and raw_values (the
        row as JSON, or the raw CSV line when it could not be parsed). -#}
    _row_number as row_number,
    _source_file as source_file,
    _parse_error as parse_error,
    case
        when _parse_error is not null then to_json(_raw_line)
        else {{ raw_values_json(relation) }}
    end as raw_values
{%- endmacro %}
