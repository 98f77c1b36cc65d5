{% macro ppi_unit_pairs(moments_where, pooled, own_keys, pair_condition, pair_columns, with_judge_centring=false) -%}
    {#- The CTEs units, moments, poolings, centred, unit_pairs and pairs of the PPI
        cross moments (int_ppi_stratum_cross_moments, int_comparison_cross_moments):
        units, int_ppi_units' labelled and unlabelled units; moments, the rows of
        int_ppi_stratum_moments meeting moments_where (the model's grain). Each unit is centred on
        the moments of both of its rows, its own (matched on judge, is_panel,
        own_keys and stratum) and the one pooling `pooled` (the same keys, `pooled`
        = 'all'): dy, dh a labelled unit's human and judge scores minus the
        stratum's labelled means, du an unlabelled unit's judge score minus its
        unlabelled mean, dg (with_judge_centring) the judge score minus the mean
        over all its units. The units are paired once (a self-join on judge,
        is_panel, prompt_id and pair_condition, over unit_a and unit_b) and both
        poolings applied to the pairs, as they pair the same units (a self-join of
        the pooled units paired twice as many rows, spilling at 3M ratings): in
        `pairs`, `pooled` is 'all' in the pooling rows and the units' shared value
        in the others (pairs of units with different values only pool). -#}
{%- set deltas = ['y', 'h', 'u'] + (['g'] if with_judge_centring else []) %}
{%- set sides = {'own': 'own_moments', 'all': 'all_moments'} %}
units as (
    select * from {{ ref('int_ppi_units') }}
    where status in ('labelled', 'unlabelled')
),

moments as (
    select * from {{ ref('int_ppi_stratum_moments') }}
    where {{ moments_where }}
),

poolings as (
    select flags.pool
    from (values (false), (true)) as flags (pool)
),

centred as (
    select
        units.judge,
        units.is_panel,
        units.prompt_id,
        units.model as unit_model,
        units.dimension as unit_dimension,
        units.stratum,
        own_moments.judge is not null as has_own,
        all_moments.judge is not null as has_all,
        {%- for side, m in sides.items() %}
        case when units.status = 'labelled' then units.y - {{ m }}.mean_y end as dy_{{ side }},
        case
            when units.status = 'labelled' then units.yhat - {{ m }}.mean_yhat_labelled
        end as dh_{{ side }},
        case
            when units.status = 'unlabelled' then units.yhat - {{ m }}.mean_yhat_unlabelled
        end as du_{{ side }}
        {%- if with_judge_centring %},
        units.yhat - (
            coalesce({{ m }}.n_labelled * {{ m }}.mean_yhat_labelled, 0)
            + coalesce({{ m }}.n_unlabelled * {{ m }}.mean_yhat_unlabelled, 0)
        ) / ({{ m }}.n_labelled + {{ m }}.n_unlabelled) as dg_{{ side }}
        {%- endif %}{{ ',' if not loop.last }}
        {%- endfor %}
    from units
    left join moments as own_moments
        on
            units.judge = own_moments.judge
            and units.is_panel = own_moments.is_panel
            {%- for key in own_keys %}
            and units.{{ key }} = own_moments.{{ key }}
            {%- endfor %}
            and units.stratum = own_moments.stratum
    left join moments as all_moments
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

unit_pairs as (
    select
        unit_a.judge,
        unit_a.is_panel,
        unit_a.unit_{{ pooled }} as shared_{{ pooled }},
        {%- for name, expr in pair_columns.items() %}
        {{ expr }} as {{ name }},
        {%- endfor %}
        unit_a.unit_{{ pooled }} = unit_b.unit_{{ pooled }}
        and unit_a.has_own
        and unit_b.has_own as has_own,
        unit_a.has_all and unit_b.has_all as has_all,
        {%- for side in sides %}{% set outer = loop %}
        {%- for d in deltas %}
        unit_a.d{{ d }}_{{ side }} as d{{ d }}_{{ side }}_a,
        unit_b.d{{ d }}_{{ side }} as d{{ d }}_{{ side }}_b{{ ',' if not (outer.last and loop.last) }}
        {%- endfor %}
        {%- endfor %}
    from centred as unit_a
    inner join centred as unit_b
        on
            unit_a.judge = unit_b.judge
            and unit_a.is_panel = unit_b.is_panel
            and unit_a.prompt_id = unit_b.prompt_id
            and ({{ pair_condition }})
),

pairs as (
    select
        unit_pairs.judge,
        unit_pairs.is_panel,
        case when poolings.pool then 'all' else unit_pairs.shared_{{ pooled }} end
            as {{ pooled }},
        {%- for name in pair_columns %}
        unit_pairs.{{ name }},
        {%- endfor %}
        {%- for d in deltas %}{% set outer = loop %}
        {%- for unit in ['a', 'b'] %}
        case
            when poolings.pool then unit_pairs.d{{ d }}_all_{{ unit }}
            else unit_pairs.d{{ d }}_own_{{ unit }}
        end as d{{ d }}_{{ unit }}{{ ',' if not (outer.last and loop.last) }}
        {%- endfor %}
        {%- endfor %}
    from unit_pairs
    cross join poolings
    where case when poolings.pool then unit_pairs.has_all else unit_pairs.has_own end
),
{%- endmacro %}

{% macro ppi_cross_sums(with_judge_centring=false) -%}
    {#- The sums over a group of `pairs` (ppi_unit_pairs) of the products of the two
        units' centred scores, by the pair's label status: ll_* both labelled,
        lu_* / ul_* one of them, uu_* neither; gg (with_judge_centring) the judge
        scores centred on all units; n_pairs the pairs. -#}
        count(*) as n_pairs,
        coalesce(sum(dy_a * dy_b), 0) as ll_yy,
        coalesce(sum(dy_a * dh_b), 0) as ll_yh,
        coalesce(sum(dh_a * dy_b), 0) as ll_hy,
        coalesce(sum(dh_a * dh_b), 0) as ll_hh,
        coalesce(sum(dy_a * du_b), 0) as lu_yu,
        coalesce(sum(dh_a * du_b), 0) as lu_hu,
        coalesce(sum(du_a * dy_b), 0) as ul_uy,
        coalesce(sum(du_a * dh_b), 0) as ul_uh,
        coalesce(sum(du_a * du_b), 0) as uu_uu
        {%- if with_judge_centring %},
        coalesce(sum(dg_a * dg_b), 0) as gg
        {%- endif %}
{%- endmacro %}
