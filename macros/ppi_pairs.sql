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
        unit b's): the sums per pair of unit keys and label statuses. -#}
    {%- set products = [('y_y', 'dy', 'dy'), ('y_j', 'dy', 'dj'), ('j_y', 'dj', 'dy'),
        ('j_j', 'dj', 'dj')] + ([('g_g', 'dg', 'dg')] if with_judge_centring else []) %}
    {{- return(products) }}
{%- endmacro %}

{% macro ppi_unit_pairs(moments_where, pooled, own_keys, pair_keys, pair_condition, pair_columns, with_judge_centring=false) -%}
    {#- The CTEs units, moments, unit_keys, centred, pair_sums, poolings and pairs of
        the PPI cross moments (int_ppi_stratum_cross_moments,
        int_comparison_cross_moments): units, int_ppi_units' labelled and unlabelled
        units; moments, the rows of int_ppi_stratum_moments meeting moments_where (the
        model's grain), each numbered (unit_key) and its (judge, is_panel,
        pair_keys) too (pair_group: the units paired share it). Each unit is centred on the moments
        of both of its rows, its own (matched on judge, is_panel, own_keys and
        stratum; its unit_key) and the one pooling `pooled` (the same keys, `pooled`
        = 'all'): dy a labelled unit's human score minus the stratum's labelled
        mean (NULL unlabelled), dj its judge score minus the mean of the units of
        its label status (dh labelled, du unlabelled: one column, the status
        beside it in is_labelled), dg (with_judge_centring) the judge score minus
        the mean over all its units. Every unit has both rows (int_ppi_stratum_moments groups
        the same units). The units are paired once (a self-join on pair_group,
        prompt_id and pair_condition, over unit_a and unit_b: integer keys and no
        other strings, a narrower join spilling less at 10M ratings) and, in pair_sums, the
        products of both centrings (ppi_pair_products: 4 or 5 per centring where the
        nine sums by label status took 9 or 10 mostly NULL) summed at once per pair
        of unit keys and label statuses: a few
        thousand groups of integer keys, where the pairs themselves are ~64M at 10M
        ratings (materialised once per pooling with their string keys, they spilled
        and took a fifth of the build). In `pairs` each pair of keys (unit_a and
        unit_b now the keys' moments rows) gets its two poolings: `pooled` is 'all'
        in the pooling rows, the keys' shared value in the others (keys with
        different values only pool); the model sums them (ppi_cross_sums). -#}
{%- set sides = {'own': 'own_moments', 'all': 'all_moments'} %}
units as (
    select * from {{ ref('int_ppi_units') }}
    where status in ('labelled', 'unlabelled')
),

moments as (
    select
        *,
        row_number() over (order by judge, is_panel, model, dimension, stratum) as unit_key,
        dense_rank() over (order by judge, is_panel
            {%- for key in pair_keys %}, {{ key }}{% endfor %}) as pair_group
    from {{ ref('int_ppi_stratum_moments') }}
    where {{ moments_where }}
),

centred as (
    select
        own_moments.pair_group,
        units.prompt_id,
        units.dimension as unit_dimension,
        own_moments.unit_key,
        units.status = 'labelled' as is_labelled,
        {%- for side, m in sides.items() %}
        units.y - {{ m }}.mean_y as dy_{{ side }},
        units.yhat - case
            when units.status = 'labelled' then {{ m }}.mean_yhat_labelled
            else {{ m }}.mean_yhat_unlabelled
        end as dj_{{ side }}
        {%- if with_judge_centring %},
        units.yhat - (
            coalesce({{ m }}.n_labelled * {{ m }}.mean_yhat_labelled, 0)
            + coalesce({{ m }}.n_unlabelled * {{ m }}.mean_yhat_unlabelled, 0)
        ) / ({{ m }}.n_labelled + {{ m }}.n_unlabelled) as dg_{{ side }}
        {%- endif %}{{ ',' if not loop.last }}
        {%- endfor %}
    from units
    inner join moments as own_moments
        on
            units.judge = own_moments.judge
            and units.is_panel = own_moments.is_panel
            {%- for key in own_keys %}
            and units.{{ key }} = own_moments.{{ key }}
            {%- endfor %}
            and units.stratum = own_moments.stratum
    inner join moments as all_moments
        on
            units.judge = all_moments.judge
            and units.is_panel = all_moments.is_panel
            {%- for key in own_keys %}
            {%- if key == pooled %}
            and all_moments.{{ key }} = 'all'
            {%- else %}
            and units.{{ key }} = all_moments.{{ key }}
            {%- endif %}
            {%- endfor %}
            and units.stratum = all_moments.stratum
),

pair_sums as (
    select
        unit_a.unit_key as key_a,
        unit_b.unit_key as key_b,
        unit_a.is_labelled as is_labelled_a,
        unit_b.is_labelled as is_labelled_b,
        count(*) as n_pairs,
        {%- for side in sides %}{% set outer = loop %}
        {%- for name, a, b in ppi_pair_products(with_judge_centring) %}
        sum(unit_a.{{ a }}_{{ side }} * unit_b.{{ b }}_{{ side }}) as {{ name }}_{{ side }}
        {{- ',' if not (outer.last and loop.last) }}
        {%- endfor %}
        {%- endfor %}
    from centred as unit_a
    inner join centred as unit_b
        on
            unit_a.pair_group = unit_b.pair_group
            and unit_a.prompt_id = unit_b.prompt_id
            and ({{ pair_condition }})
    group by unit_a.unit_key, unit_b.unit_key, unit_a.is_labelled, unit_b.is_labelled
),

poolings as (
    select flags.pool
    from (values (false), (true)) as flags (pool)
),

pairs as (
    select
        unit_a.judge,
        unit_a.is_panel,
        case when poolings.pool then 'all' else unit_a.{{ pooled }} end as {{ pooled }},
        {%- for name, expr in pair_columns.items() %}
        {{ expr }} as {{ name }},
        {%- endfor %}
        pair_sums.is_labelled_a,
        pair_sums.is_labelled_b,
        pair_sums.n_pairs,
        {%- for name, a, b in ppi_pair_products(with_judge_centring) %}
        case
            when poolings.pool then pair_sums.{{ name }}_all else pair_sums.{{ name }}_own
        end as {{ name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from pair_sums
    inner join moments as unit_a on pair_sums.key_a = unit_a.unit_key
    inner join moments as unit_b on pair_sums.key_b = unit_b.unit_key
    cross join poolings
    where poolings.pool or unit_a.{{ pooled }} = unit_b.{{ pooled }}
),
{%- endmacro %}

{% macro ppi_cross_sums(with_judge_centring=false) -%}
    {#- The sums over a group of `pairs` (ppi_unit_pairs, each a pair of unit keys
        and label statuses in one pooling) of the products of the two units'
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
