{% macro clean_text(column) -%}
    {#- Trimmed text, with empty strings as null. -#}
    nullif(trim({{ column }}), '')
{%- endmacro %}

{% macro text_key(expression) -%}
    {#- Matching key for names: case and whitespace insensitive. -#}
    lower(trim({{ regex_replace_all(expression, '\\s+', ' ') }}))
{%- endmacro %}

{% macro label_key(expression) -%}
    {#- Matching key for labels: text_key, without surrounding quotes, asterisks
        (markdown bold) and a trailing full stop, so "**Generally yes.**" matches. -#}
    nullif({{ text_key(regex_replace_all(expression, '^[\\s\\*"\'`]+|[\\s\\*"\'`\\.]+$', '')) }}, '')
{%- endmacro %}

{% macro final_answer(column) -%}
    {#- The answer a judge's free text ends with: what follows the last "Answer:",
        up to the end of that line. Null when there is no "Answer:". -#}
    nullif(trim(split_part(
        regexp_extract({{ column }}, {{ sql_string('(?is)^.*answer\\s*[:：]\\s*(.*)$') }}, 1),
        chr(10), 1
    )), '')
{%- endmacro %}

{% macro is_na_label(key_expression) -%}
    {#- A label meaning "not applicable": NA, N/A, or "NA: <reason>". -#}
    {{ regex_full_match("coalesce(" ~ key_expression ~ ", '')", '(na|n/a)(\\s*[:\\-].*)?') }}
{%- endmacro %}

{% macro raw_values_json(relation, alias) -%}
    {#- One JSON object with every input column of a base table (not the loader's
        own underscore columns) read through the table alias, for
        rejected_rows.raw_values. -#}
    {%- if execute -%}
        {%- set cols = adapter.get_columns_in_relation(relation) | rejectattr('name', 'in', ['_row_number', '_source_file', '_parse_error', '_raw_line', '_load_id', '_loaded_at', '_load_key', '_watermark_above', '_watermark_through', '_watermark_column', '_watermark_held']) | list -%}
        {%- if cols | length == 0 -%}
            {{ json_null() }}
        {%- else -%}
            {{ json_object_of(cols | map(attribute='name') | list, alias) }}
        {%- endif -%}
    {%- else -%}
        {{ json_null() }}
    {%- endif -%}
{%- endmacro %}

{% macro pairwise_verdict(expression) -%}
    {#- A pairwise verdict as first, second or tie; null when it is none of them.
        Matched on label_key (case, whitespace, quotes, ** and a final full stop
        ignored) after removing MT-Bench style [[ ]]: first = first, 1, a;
        second = second, 2, b; tie = tie, draw, equal, =. "0" is not accepted
        (it means the first slot in 0-based logs and a tie in others). -#}
    case coalesce(
        -- fast path for the plain spellings (no regular expression per row)
        case
            when lower({{ expression }}) in ('first', 'second', 'tie', '1', '2', 'a', 'b')
                then lower({{ expression }})
        end,
        {{ regex_replace_all(
            "coalesce(" ~ label_key(expression) ~ ", '')", '^\\[\\[\\s*(.*?)\\s*\\]\\]$', '\\1'
        ) }}
    )
        when 'first' then 'first'
        when '1' then 'first'
        when 'a' then 'first'
        when 'second' then 'second'
        when '2' then 'second'
        when 'b' then 'second'
        when 'tie' then 'tie'
        when 'draw' then 'tie'
        when 'equal' then 'tie'
        when '=' then 'tie'
    end
{%- endmacro %}
