{% macro input_relation_kinds() -%}
    {#- The input kinds read from relations (the source judge_bias_inputs), in
        contract order: the var judge_bias_input_relations ('' or []: none, the file
        route; all; a list of kinds or their comma-separated names). The loaders
        check the value and name what is wrong (judge_bias.inputs.relations). -#}
    {%- set value = var('judge_bias_input_relations', '') -%}
    {%- set all_kinds = checked_inputs().keys() | list -%}
    {%- if value is none -%}
        {%- set value = [] -%}
    {%- elif value is string -%}
        {%- set value = value.split(',') -%}
    {%- endif -%}
    {%- set kinds = value | map('string') | map('trim') | reject('equalto', '') | list -%}
    {%- if kinds | map('lower') | list == ['all'] -%}
        {{ return(all_kinds) }}
    {%- endif -%}
    {{ return(all_kinds | select('in', kinds) | list) }}
{%- endmacro %}

{% macro input_rows_read(kind) -%}
    {#- The rows read of an input kind, for input_row_counts: on the relation route a
        plain count(*) of the relation itself (stg_inputs__relation_counts), so that
        the loader's rows reconcile with it; else, and on an incremental build (the
        totals of every load, as for files: each load's rows reconcile with the
        relation in stg_inputs__relation_counts' test), the rows of the loader's
        table (the file's records). -#}
    {%- if kind in input_relation_kinds() and not incremental_on() -%}
        (
            select relation.rows_in_relation
            from {{ ref('stg_inputs__relation_counts') }} as relation
            where relation.source = '{{ kind }}'
        )
    {%- else -%}
        (select count(*) from {{ input_table(kind) }})
    {%- endif -%}
{%- endmacro %}

{% macro input_noun() -%}
    {#- What an input kind is in the reasons of rejected_rows: a relation on the
        relation route ("not in the models relation"), a file otherwise. -#}
    {{ return('relation' if input_relation_kinds() else 'file') }}
{%- endmacro %}

{% macro relation_columns(relation) -%}
    {#- The columns of a relation (a table, a view, a table function over files), as
        the loader maps them (judge_bias.inputs.loading.map_columns): the name trimmed,
        without a leading byte order mark and in lower case -> (the relation's own
        name, its DuckDB type), from DuckDB's describe (information_schema does not
        list a table function's columns). -#}
    {%- set columns = {} -%}
    {%- if execute -%}
        {%- for row in run_query('describe select * from ' ~ relation) -%}
            {%- do columns.update({(row[0] | trim).lstrip('\ufeff') | lower: (row[0], row[1])}) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(columns) }}
{%- endmacro %}

{% macro relation_text(column, dtype) -%}
    {#- A relation's column as the loader reads it into the contract's text
        (judge_bias.inputs.relations.as_text, mirrored: tests/test_relation_loading
        holds them equal): cast to text, but an integral value of a fractional
        type (DOUBLE 4.0, DECIMAL 17.00) as the integer it is. -#}
    {%- set name = dtype | trim | upper -%}
    {%- if name in ['DOUBLE', 'FLOAT', 'REAL', 'FLOAT4', 'FLOAT8', 'DECIMAL'] or name.startswith('DECIMAL(') -%}
        case when {{ column }} = trunc({{ column }}) and abs(cast({{ column }} as double)) < 9007199254740992 then cast(cast({{ column }} as bigint) as varchar) else cast({{ column }} as varchar) end
    {%- else -%}
        cast({{ column }} as varchar)
    {%- endif -%}
{%- endmacro %}

{% macro input_key_columns(kind) -%}
    {#- The documented key of an input kind, each column with the value an empty one
        means (judge_bias.inputs.contract's key and judge_bias.inputs.relations.KEY_DEFAULTS,
        mirrored: tests/test_relation_loading holds them equal). -#}
    {%- set keys = {
        'prompts': [('prompt_id', '')],
        'completions': [('prompt_id', ''), ('model', '')],
        'human_annotations': [('prompt_id', ''), ('model', ''), ('dimension', ''), ('annotator_id', '')],
        'judge_ratings': [
            ('judge', ''), ('prompt_id', ''), ('model', ''), ('dimension', ''),
            ('framing', 'positive'), ('run_id', '1'),
        ],
        'pairwise_judgments': [
            ('judge', ''), ('prompt_id', ''), ('model_first', ''), ('model_second', ''), ('run_id', '1'),
        ],
        'perturbation_judgments': [
            ('judge', ''), ('item_id', ''), ('bias_type', ''), ('condition', ''), ('run_id', '1'),
        ],
        'models': [('alias', '')],
        'rating_scales': [('dimension', ''), ('label', '')],
    } -%}
    {{ return(keys[kind]) }}
{%- endmacro %}

{% macro relation_load_key(key, alias, columns) -%}
    {#- The _load_key the loader gives a row of the relation (alias ``alias``, its
        columns as relation_columns maps them; ``key``: input_key_columns of its
        kind): judge_bias.inputs.loads.key_expression over the row's text, a key
        column it lacks null. -#}
    concat_ws(chr(31)
    {%- for col, default in key -%}
        {%- if col in columns -%}
            {%- set text = relation_text(alias ~ '."' ~ (columns[col][0] | replace('"', '""')) ~ '"', columns[col][1]) -%}
        {%- else -%}
            {%- set text = 'cast(null as varchar)' -%}
        {%- endif -%}
        , coalesce(nullif(trim({{ text }}), ''), '{{ default }}')
    {%- endfor -%}
    )
{%- endmacro %}
