-- The sufficient statistics of stratified PPI (python/judge_bias/ppi/estimator.py):
-- per judge (and the panel of all judges) x model x dimension (each also
-- pooled as 'all') x stratum, nine moments of the labelled units (a human
-- score and the judge's) and the unlabelled ones (the judge's score only), and
-- five third central moments for the skewness-corrected interval. The units
-- (int_ppi_units) whose human labels or judge scores are all NA belong to
-- neither set: they are counted (n_human_na, n_judge_na), never dropped silently.
with

-- read twice (unit_sums, group_centred) and not materialised: each reader scans it
units as {{ not_materialized() }} (
    select * from {{ ref('int_ppi_units') }}
),

-- each unit also counts in its model's pooled row (model 'all'), its dimension's
-- pooled row (dimension 'all') and the row pooling both
poolings as (
    select
        flags.pool_model,
        flags.pool_dimension
    from (
        values (false, false), (true, false), (false, true), (true, true)
    ) as flags (pool_model, pool_dimension)
),

-- the sums and counts of the group means, taken once per unit group (model and
-- dimension not pooled), each numbered (unit_group), and added up into each
-- pooling's groups: the units are aggregated once, not four times over (the means
-- then differ from an avg over the pooled rows by the order of their additions
-- only, ~1e-16 relative)
unit_sums as (
    select
        judge,
        is_panel,
        model,
        dimension,
        stratum,
        row_number() over (order by judge, is_panel, model, dimension, stratum) as unit_group,
        sum(case when status = 'labelled' then y end) as sum_y,
        count(case when status = 'labelled' then y end) as n_y,
        sum(case when status = 'labelled' then yhat end) as sum_yhat_labelled,
        count(case when status = 'labelled' then yhat end) as n_yhat_labelled,
        sum(case when status = 'unlabelled' then yhat end) as sum_yhat_unlabelled,
        count(case when status = 'unlabelled' then yhat end) as n_yhat_unlabelled
    from units
    group by judge, is_panel, model, dimension, stratum
),

-- each unit group in its four poolings' groups (a few hundred rows), each pooled
-- group numbered (pooled_group)
group_poolings as (
    select
        unit_sums.*,
        case when poolings.pool_model then 'all' else unit_sums.model end as pooled_model,
        case
            when poolings.pool_dimension then 'all' else unit_sums.dimension
        end as pooled_dimension
    from unit_sums
    cross join poolings
),

pooled_groups as (
    select
        *,
        dense_rank() over (
            order by judge, is_panel, pooled_model, pooled_dimension, stratum
        ) as pooled_group
    from group_poolings
),

-- the group means, for the third central moments of the skewness-corrected
-- interval
group_means as (
    select
        pooled_group,
        judge,
        is_panel,
        pooled_model as model,
        pooled_dimension as dimension,
        stratum,
        sum(sum_y) / nullif(sum(n_y), 0) as mean_y,
        sum(sum_yhat_labelled) / nullif(sum(n_yhat_labelled), 0) as mean_yhat_labelled,
        sum(sum_yhat_unlabelled) / nullif(sum(n_yhat_unlabelled), 0) as mean_yhat_unlabelled
    from pooled_groups
    group by pooled_group, judge, is_panel, pooled_model, pooled_dimension, stratum
),

-- each unit group's four pooled groups and their means
group_targets as (
    select
        pooled_groups.unit_group,
        group_means.pooled_group,
        group_means.mean_y,
        group_means.mean_yhat_labelled,
        group_means.mean_yhat_unlabelled
    from pooled_groups
    inner join group_means on pooled_groups.pooled_group = group_means.pooled_group
),

-- each unit group's sums of the powers and products of its units' scores centred
-- on the unit group's own means (a: y - its labelled mean, b: yhat - its labelled
-- mean, c: yhat - its unlabelled mean): the units are read once, not once per
-- pooling (the four poolings of every unit, ~47M rows at 10M ratings, were four
-- fifths of the model). The second powers and the product are n x var_pop (and
-- covar_pop), DuckDB's and Spark's streaming central moments, not sums of the
-- squared centred scores: on 5-point data at 10M ratings var_y's relative error
-- against an exact sum was 1.2e-13 from sum(a * a), ~1e-15 from var_pop
-- (review18c). var_pop is centred on the exact mean, the sums of the first powers
-- (s_a, s_b, s_c) on the rounded one: pooled_sums shifts the second moments
-- without them (see there)
group_centred as (
    select
        unit_sums.unit_group,
        units.status,
        units.y,
        units.yhat,
        units.y - unit_sums.sum_y / nullif(unit_sums.n_y, 0) as a,
        units.yhat - unit_sums.sum_yhat_labelled / nullif(unit_sums.n_yhat_labelled, 0) as b,
        units.yhat - unit_sums.sum_yhat_unlabelled / nullif(unit_sums.n_yhat_unlabelled, 0) as c
    from units
    inner join unit_sums
        on
            units.judge is not distinct from unit_sums.judge
            and units.is_panel is not distinct from unit_sums.is_panel
            and units.model is not distinct from unit_sums.model
            and units.dimension is not distinct from unit_sums.dimension
            and units.stratum is not distinct from unit_sums.stratum
),

group_powers as (
    select
        unit_group,
        count(*) filter (where status = 'labelled') as n_l,
        sum(a) filter (where status = 'labelled') as s_a,
        sum(b) filter (where status = 'labelled') as s_b,
        count(*) filter (where status = 'labelled')
        * var_pop(y) filter (where status = 'labelled') as s_aa,
        count(*) filter (where status = 'labelled')
        * covar_pop(y, yhat) filter (where status = 'labelled') as s_ab,
        count(*) filter (where status = 'labelled')
        * var_pop(yhat) filter (where status = 'labelled') as s_bb,
        sum(a * a * a) filter (where status = 'labelled') as s_aaa,
        sum(a * a * b) filter (where status = 'labelled') as s_aab,
        sum(a * b * b) filter (where status = 'labelled') as s_abb,
        sum(b * b * b) filter (where status = 'labelled') as s_bbb,
        count(*) filter (where status = 'unlabelled') as n_u,
        sum(c) filter (where status = 'unlabelled') as s_c,
        count(*) filter (where status = 'unlabelled')
        * var_pop(yhat) filter (where status = 'unlabelled') as s_cc,
        sum(c * c * c) filter (where status = 'unlabelled') as s_ccc,
        count(*) filter (where status = 'human_na') as n_human_na,
        count(*) filter (where status = 'judge_na') as n_judge_na
    from group_centred
    group by unit_group
),

-- each unit group's sums moved to each of its pooled groups' means (d: the unit
-- group's mean minus the pooled group's; (a + d)^k expanded), a few hundred rows
shifted as (
    select
        group_targets.pooled_group,
        group_powers.n_l,
        group_powers.n_u,
        group_powers.n_human_na,
        group_powers.n_judge_na,
        unit_sums.sum_y / nullif(unit_sums.n_y, 0) - group_targets.mean_y as dy,
        unit_sums.sum_yhat_labelled / nullif(unit_sums.n_yhat_labelled, 0)
        - group_targets.mean_yhat_labelled as dh,
        unit_sums.sum_yhat_unlabelled / nullif(unit_sums.n_yhat_unlabelled, 0)
        - group_targets.mean_yhat_unlabelled as du,
        group_powers.s_a,
        group_powers.s_b,
        group_powers.s_aa,
        group_powers.s_ab,
        group_powers.s_bb,
        group_powers.s_aaa,
        group_powers.s_aab,
        group_powers.s_abb,
        group_powers.s_bbb,
        group_powers.s_c,
        group_powers.s_cc,
        group_powers.s_ccc
    from group_powers
    inner join unit_sums on group_powers.unit_group = unit_sums.unit_group
    inner join group_targets on group_powers.unit_group = group_targets.unit_group
),

-- The second moments leave out the cross terms (2 * dy * s_a and the like): s_aa
-- is centred on the exact mean, so its own s_a is zero, and the s_a summed from the
-- rounded mean is only that rounding (n x ~1e-17): kept, it could take a group
-- whose scores are all one inexact value (0.7, 5/6) below zero (var_y -1.2e-32, a
-- NaN human-only interval); left out, every term is >= 0. At 10M ratings against
-- exact fractions the error stays 1.2e-14 to 2.2e-14 relative. The third moments
-- keep them (their s_a pairs with the sums of the same centring)
pooled_sums as (
    select
        pooled_group,
        cast(sum(n_l) as bigint) as n_labelled,
        cast(sum(n_u) as bigint) as n_unlabelled,
        cast(sum(n_human_na) as bigint) as n_human_na,
        cast(sum(n_judge_na) as bigint) as n_judge_na,
        sum(s_aa + n_l * dy * dy) as ss_y,
        sum(s_bb + n_l * dh * dh) as ss_yhat_labelled,
        sum(s_ab + n_l * dy * dh) as ss_y_yhat,
        sum(s_cc + n_u * du * du) as ss_yhat_unlabelled,
        sum(s_aaa + 3 * dy * s_aa + 3 * dy * dy * s_a + n_l * dy * dy * dy) as sss_y,
        sum(
            s_aab + dh * s_aa + 2 * dy * s_ab + 2 * dy * dh * s_a + dy * dy * s_b
            + n_l * dy * dy * dh
        ) as sss_y_y_yhat,
        sum(
            s_abb + dy * s_bb + 2 * dh * s_ab + 2 * dy * dh * s_b + dh * dh * s_a
            + n_l * dy * dh * dh
        ) as sss_y_yhat_yhat,
        sum(s_bbb + 3 * dh * s_bb + 3 * dh * dh * s_b + n_l * dh * dh * dh) as sss_yhat_labelled,
        sum(s_ccc + 3 * du * s_cc + 3 * du * du * s_c + n_u * du * du * du) as sss_yhat_unlabelled
    from shifted
    group by pooled_group
),

moments as (
    select
        group_means.pooled_group,
        pooled_sums.n_labelled,
        group_means.mean_y,
        group_means.mean_yhat_labelled,
        pooled_sums.ss_y / nullif(pooled_sums.n_labelled, 0) as var_y,
        pooled_sums.ss_yhat_labelled / nullif(pooled_sums.n_labelled, 0) as var_yhat_labelled,
        pooled_sums.ss_y_yhat / nullif(pooled_sums.n_labelled, 0) as cov_y_yhat,
        pooled_sums.n_unlabelled,
        group_means.mean_yhat_unlabelled,
        pooled_sums.ss_yhat_unlabelled / nullif(pooled_sums.n_unlabelled, 0)
            as var_yhat_unlabelled,
        pooled_sums.sss_y / nullif(pooled_sums.n_labelled, 0) as m3_y,
        pooled_sums.sss_y_y_yhat / nullif(pooled_sums.n_labelled, 0) as m3_y_y_yhat,
        pooled_sums.sss_y_yhat_yhat / nullif(pooled_sums.n_labelled, 0) as m3_y_yhat_yhat,
        pooled_sums.sss_yhat_labelled / nullif(pooled_sums.n_labelled, 0) as m3_yhat_labelled,
        pooled_sums.sss_yhat_unlabelled / nullif(pooled_sums.n_unlabelled, 0)
            as m3_yhat_unlabelled,
        pooled_sums.n_human_na,
        pooled_sums.n_judge_na
    from group_means
    inner join pooled_sums on group_means.pooled_group = pooled_sums.pooled_group
),

final as (
    select
        group_means.judge,
        group_means.is_panel,
        group_means.model,
        group_means.dimension,
        group_means.stratum,
        moments.n_labelled,
        moments.mean_y,
        moments.mean_yhat_labelled,
        moments.var_y,
        moments.var_yhat_labelled,
        moments.cov_y_yhat,
        moments.n_unlabelled,
        moments.mean_yhat_unlabelled,
        moments.var_yhat_unlabelled,
        moments.m3_y,
        moments.m3_y_y_yhat,
        moments.m3_y_yhat_yhat,
        moments.m3_yhat_labelled,
        moments.m3_yhat_unlabelled,
        moments.n_human_na,
        moments.n_judge_na
    from moments
    inner join group_means on moments.pooled_group = group_means.pooled_group
)

select * from final
