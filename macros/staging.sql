{% macro loader_columns(relation) -%}
    {#- The loader's bookkeeping columns of a base_inputs__<kind> table, renamed
        for staging: row_number, source_file, parse_error. (rejected_rows rebuilds
        a rejected row's raw values from the base table: only for those rows.) -#}
    _row_number as row_number,
    _source_file as source_file,
    _parse_error as parse_error
{%- endmacro %}
