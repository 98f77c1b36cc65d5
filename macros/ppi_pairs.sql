{% macro ppi_cross_products(with_judge_centring=false) -%}
    {#- The products the PPI cross moments sum, as (name, the pair's label status,
        product): ll_* both units labelled, lu_* / ul_* only unit a / unit b, uu_*
        neither, each a product of the two units' scores dy (a labelled unit's human
        score centred) and dj (its judge score centred on its status's mean: dh
        labelled, du unlabelled); gg (with_judge_centring, any status) the judge
        scores centred on all units. -#}
    {%- set products = [
        ('ll_yy', 'll', 'y_y'), ('ll_yh', 'll', 'y_j'), ('ll_hy', 'll', 'j_y'),
        ('ll_hh', 'll', 'j_j'), ('lu_yu', 'lu', 'y_j'), ('lu_hu', 'lu', 'j_j'),
        ('ul_uy', 'ul', 'j_y'), ('ul_uh', 'ul', 'j_j'), ('uu_uu', 'uu', 'j_j'),
    ] + ([('gg', none, 'g_g')] if with_judge_centring else []) %}
    {{- return(products) }}
{%- endmacro %}

{% macro ppi_pair_products(with_judge_centring=false) -%}
    {#- The distinct products of ppi_cross_products, as (product, unit a's score,
        unit b's): the sums per pair of unit keys and label statuses that
        int_ppi_unit_pair_sums (python/judge_bias/ppi/pairs.py) computes under each
        centring (own, dimensions, models), column <product>_<centring>. -#}
    {%- set products = [('y_y', 'dy', 'dy'), ('y_j', 'dy', 'dj'), ('j_y', 'dj', 'dy'),
        ('j_j', 'dj', 'dj')] + ([('g_g', 'dg', 'dg')] if with_judge_centring else []) %}
    {{- return(products) }}
{%- endmacro %}

{% macro ppi_pooled_pairs(pooled, own_side, pooled_side, pair_columns, pair_where='true', with_judge_centring=false) -%}
    {#- The CTEs poolings and pairs of a PPI cross moments model: each row of
        int_ppi_unit_pair_sums (a pair of unit groups and label statuses) meeting
        pair_where, in its two poolings: `pooled` is unit a's (model or dimension) with
        the sums of the own_side centring where the two units share it, 'all' with
        those of pooled_side in every row; the model sums them (ppi_cross_sums). -#}
poolings as (
    select flags.pool
    from (values (false), (true)) as flags (pool)
),

pairs as (
    select
        pair_sums.judge,
        pair_sums.is_panel,
        case when poolings.pool then 'all' else pair_sums.{{ pooled }}_a end as {{ pooled }},
        {%- for name, expr in pair_columns.items() %}
        pair_sums.{{ expr }} as {{ name }},
        {%- endfor %}
        pair_sums.is_labelled_a,
        pair_sums.is_labelled_b,
        pair_sums.n_pairs,
        {%- for name, a, b in ppi_pair_products(with_judge_centring) %}
        case
            when poolings.pool then pair_sums.{{ name }}_{{ pooled_side }}
            else pair_sums.{{ name }}_{{ own_side }}
        end as {{ name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ ref('int_ppi_unit_pair_sums') }} as pair_sums
    cross join poolings
    where
        ({{ pair_where }})
        and (poolings.pool or pair_sums.{{ pooled }}_a = pair_sums.{{ pooled }}_b)
),
{%- endmacro %}

{% macro ppi_cross_sums(with_judge_centring=false) -%}
    {#- The sums over a group of `pairs` (ppi_pooled_pairs, each a pair of unit
        groups and label statuses in one pooling) of the products of the two units'
        centred scores (ppi_cross_products): ll_* both labelled, lu_* / ul_* only
        unit a / unit b, uu_* neither, gg (with_judge_centring) the judge scores
        centred on all units; n_pairs the pairs of units. -#}
    {%- set statuses = {
        'll': 'is_labelled_a and is_labelled_b',
        'lu': 'is_labelled_a and not is_labelled_b',
        'ul': 'not is_labelled_a and is_labelled_b',
        'uu': 'not is_labelled_a and not is_labelled_b',
    } %}
        cast(sum(n_pairs) as bigint) as n_pairs,
        {%- for name, status, product in ppi_cross_products(with_judge_centring) %}
        {%- if status %}
        coalesce(sum(case when {{ statuses[status] }} then {{ product }} end), 0) as {{ name }}
        {%- else %}
        coalesce(sum({{ product }}), 0) as {{ name }}
        {%- endif %}{{ ',' if not loop.last }}
        {%- endfor %}
{%- endmacro %}
