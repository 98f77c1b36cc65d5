{% macro ppi_pair_centrings() -%}
    {#- The centrings int_ppi_unit_pair_sums sums the pairs' products under, as side ->
        (moments: the int_ppi_stratum_moments row a unit is centred on, of its judge,
        is_panel and stratum; judge_centring: also dg, the judge score centred on all
        the row's units; one_model: summed over the pairs of one model only): own (its
        model x dimension: int_comparison_cross_moments' rows of one dimension),
        dimensions (its model, dimension 'all': the comparison's rows pooling the
        dimensions and int_ppi_stratum_cross_moments' rows of one model), models
        (model 'all', dimension 'all': the stratum model's rows pooling the models). -#}
    {%- set centrings = {
        'own': {'moments': 'own_moments', 'judge_centring': true, 'one_model': false},
        'dimensions': {'moments': 'dimensions_moments', 'judge_centring': true, 'one_model': false},
        'models': {'moments': 'models_moments', 'judge_centring': false, 'one_model': true},
    } %}
    {{- return(centrings) }}
{%- endmacro %}

{% macro ppi_centring_means() -%}
    {#- The select list of int_ppi_unit_groups: per centring
        (ppi_pair_centrings) its row's mean_y_<side>, mean_yhat_labelled_<side>,
        mean_yhat_unlabelled_<side> and (judge_centring) mean_yhat_<side>, the mean
        judge score of all the row's units (NULL for a row of no estimable unit,
        all judge_na or human_na: unused there, and Spark's ANSI mode raises on a
        division by zero, issue 34 review). -#}
    {%- for side, c in ppi_pair_centrings().items() %}
        {{ c.moments }}.mean_y as mean_y_{{ side }},
        {{ c.moments }}.mean_yhat_labelled as mean_yhat_labelled_{{ side }},
        {{ c.moments }}.mean_yhat_unlabelled as mean_yhat_unlabelled_{{ side }}
        {%- if c.judge_centring %},
        (
            coalesce({{ c.moments }}.n_labelled * {{ c.moments }}.mean_yhat_labelled, 0)
            + coalesce({{ c.moments }}.n_unlabelled * {{ c.moments }}.mean_yhat_unlabelled, 0)
        ) / nullif({{ c.moments }}.n_labelled + {{ c.moments }}.n_unlabelled, 0) as mean_yhat_{{ side }}
        {%- endif %}{{ ',' if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{% macro ppi_centred_scores() -%}
    {#- The select list of int_ppi_unit_pair_sums' centred: per centring
        (ppi_pair_centrings) dy_<side> a labelled unit's human score minus the row's
        labelled mean (NULL unlabelled), dj_<side> its judge score minus the row's
        mean of its label status, dg_<side> (judge_centring) its judge score minus
        the row's mean over all units. -#}
    {%- for side, c in ppi_pair_centrings().items() %}
        units.y - unit_groups.mean_y_{{ side }} as dy_{{ side }},
        units.yhat - case
            when units.status = 'labelled' then unit_groups.mean_yhat_labelled_{{ side }}
            else unit_groups.mean_yhat_unlabelled_{{ side }}
        end as dj_{{ side }}
        {%- if c.judge_centring %},
        units.yhat - unit_groups.mean_yhat_{{ side }} as dg_{{ side }}
        {%- endif %}{{ ',' if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{% macro ppi_pair_product_sums() -%}
    {#- The select list of int_ppi_unit_pair_sums' pair_sums: per centring
        (ppi_pair_centrings) and product (ppi_pair_products) <product>_<side>, the sum
        over the pairs of unit_a's score times unit_b's. A one_model centring is
        summed over every pair too (a CASE on the model in each of ~64M pairs cost
        more than the sums) and its sums kept only for the pairs of one model
        (ppi_pair_sum_columns). -#}
    {%- for side, c in ppi_pair_centrings().items() %}{% set outer = loop %}
        {%- for name, a, b in ppi_pair_products(c.judge_centring) %}
        sum(unit_a.{{ a }}_{{ side }} * unit_b.{{ b }}_{{ side }}) as {{ name }}_{{ side }}
        {{- ',' if not (outer.last and loop.last) }}
        {%- endfor %}
    {%- endfor %}
{%- endmacro %}

{% macro ppi_pair_sum_columns(relation) -%}
    {#- The columns of ppi_pair_product_sums, each relation.<product>_<side>; a
        one_model centring's NULL unless unit_a and unit_b (its unit groups) are of
        one model. -#}
    {%- for side, c in ppi_pair_centrings().items() %}{% set outer = loop %}
        {%- for name, a, b in ppi_pair_products(c.judge_centring) %}
        {%- if c.one_model %}
        case
            when unit_a.model = unit_b.model then {{ relation }}.{{ name }}_{{ side }}
        end as {{ name }}_{{ side }}
        {%- else %}
        {{ relation }}.{{ name }}_{{ side }}
        {%- endif %}{{ ',' if not (outer.last and loop.last) }}
        {%- endfor %}
    {%- endfor %}
{%- endmacro %}

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
