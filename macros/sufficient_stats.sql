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

