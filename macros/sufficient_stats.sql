{% macro bias_stat_keys() -%}
    {#- The categorical key of the bias statistics: every column an analysis
        filters or slices on (python/judge_bias/bias/sufficient.py KEY_COLUMNS,
        in the same order; has_length is derived in the select). -#}
    {{ return([
        'reference_kind', 'reference_family', 'judge', 'judge_family', 'model',
        'model_family', 'is_self', 'is_same_family', 'dimension', 'dataset', 'task_type',
    ]) }}
{%- endmacro %}

{% macro bias_moment_sums(y, r, l, max_degree=4, max_y=2) -%}
    {#- Sufficient statistics of the OLS bias regressions: one column
        m_y{a}r{b}l{c} = sum(y^a * r^b * l^c) for a <= max_y and
        a + b + c <= max_degree (m_y0r0l0 is the row count). Degree 4 gives
        X'X, X'y and the HC0 meat; degree 2 is enough per prompt (cluster).
        The order equals judge_bias.bias.sufficient.moments(). Plain SQL. -#}
    {%- set items = [] -%}
    {%- for a in range(max_y + 1) -%}
        {%- for b in range(max_degree + 1) -%}
            {%- for c in range(max_degree + 1) -%}
                {%- if a + b + c <= max_degree -%}
                    {%- set factors = [y] * a + [r] * b + [l] * c -%}
                    {%- set name = 'm_y' ~ a ~ 'r' ~ b ~ 'l' ~ c -%}
                    {%- if factors | length == 0 -%}
                        {%- do items.append('count(*) as ' ~ name) -%}
                    {%- else -%}
                        {%- do items.append('sum(' ~ factors | join(' * ') ~ ') as ' ~ name) -%}
                    {%- endif -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ items | join(',\n    ') }}
{%- endmacro %}

{% macro bias_moment_names(max_degree=4, max_y=2) -%}
    {#- The names of bias_moment_sums' columns, in its order (m_y0r0l0, the count,
        first). -#}
    {%- set names = [] -%}
    {%- for a in range(max_y + 1) -%}
        {%- for b in range(max_degree + 1) -%}
            {%- for c in range(max_degree + 1) -%}
                {%- if a + b + c <= max_degree -%}
                    {%- do names.append('m_y' ~ a ~ 'r' ~ b ~ 'l' ~ c) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}

{% macro bias_moment_totals() -%}
    {#- The sums of bias_moment_sums' columns (degree 4) over the rows of a group:
        int_bias_cell_stats from per-prompt moments; the count stays a bigint. -#}
    {%- set items = [] -%}
    {%- for name in bias_moment_names() -%}
        {%- if loop.first -%}
            {%- do items.append('cast(sum(' ~ name ~ ') as bigint) as ' ~ name) -%}
        {%- else -%}
            {%- do items.append('sum(' ~ name ~ ') as ' ~ name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ items | join(',\n    ') }}
{%- endmacro %}

{% macro bias_reference_moment_totals(moments, reference) -%}
    {#- The columns of bias_moment_sums (degree 4) for rows whose reference is the
        constant `reference` within each group of `moments` (per-prompt moments
        of a cell: m_y{a}r0l{c}, no reference): sum(reference^b * m_y{a}r0l{c})
        is the sum of y^a * reference^b * l^c over the group's rows (the
        llm_reference rows of int_bias_cell_stats on an incremental warehouse, as
        int_bias_prompt_stats at degree 2); the count stays a bigint. -#}
    {%- set items = [] -%}
    {%- for name in bias_moment_names() -%}
        {%- set b = name[5] | int -%}
        {%- set base = moments ~ '.' ~ name[:5] ~ '0' ~ name[6:] -%}
        {%- if loop.first -%}
            {%- do items.append('cast(sum(' ~ base ~ ') as bigint) as ' ~ name) -%}
        {%- elif b == 0 -%}
            {%- do items.append('sum(' ~ base ~ ') as ' ~ name) -%}
        {%- else -%}
            {%- do items.append('sum(' ~ ([reference] * b + [base]) | join(' * ') ~ ') as ' ~ name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ items | join(',\n    ') }}
{%- endmacro %}
