-- The sufficient statistics of stratified PPI (python/judge_bias/ppi/estimator.py):
-- per judge (and the panel of all judges) x model x dimension (each also
-- pooled as 'all') x stratum, nine moments of the labelled units (a human
-- score and the judge's) and the unlabelled ones (the judge's score only), and
-- five third central moments for the skewness-corrected interval. The units
-- (int_ppi_units) whose human labels or judge scores are all NA belong to
-- neither set: they are counted (n_human_na, n_judge_na), never dropped silently.
with

-- read twice (unit_sums, centred) and not materialised: each reader scans it
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

-- each unit in its four pooled groups, centred on their means: the units are
-- matched to their unit group once on the string keys (a window over the four
-- poolings of every unit sorted them all, spilling at 3M ratings; a join of the
-- four pooled copies on the strings was a third of the model at 1M), the
-- poolings then on an integer, and the groups aggregated on it
centred as (
    select
        group_targets.pooled_group,
        units.status,
        units.y,
        units.yhat,
        units.y - group_targets.mean_y as dy,
        units.yhat - group_targets.mean_yhat_labelled as dh,
        units.yhat - group_targets.mean_yhat_unlabelled as du
    from units
    inner join unit_sums
        on
            units.judge is not distinct from unit_sums.judge
            and units.is_panel is not distinct from unit_sums.is_panel
            and units.model is not distinct from unit_sums.model
            and units.dimension is not distinct from unit_sums.dimension
            and units.stratum is not distinct from unit_sums.stratum
    inner join group_targets on unit_sums.unit_group = group_targets.unit_group
),

moments as (
    select
        pooled_group,
        count(*) filter (where status = 'labelled') as n_labelled,
        avg(y) filter (where status = 'labelled') as mean_y,
        avg(yhat) filter (where status = 'labelled') as mean_yhat_labelled,
        var_pop(y) filter (where status = 'labelled') as var_y,
        var_pop(yhat) filter (where status = 'labelled') as var_yhat_labelled,
        covar_pop(y, yhat) filter (where status = 'labelled') as cov_y_yhat,
        count(*) filter (where status = 'unlabelled') as n_unlabelled,
        avg(yhat) filter (where status = 'unlabelled') as mean_yhat_unlabelled,
        var_pop(yhat) filter (where status = 'unlabelled') as var_yhat_unlabelled,
        avg(dy * dy * dy) filter (where status = 'labelled') as m3_y,
        avg(dy * dy * dh) filter (where status = 'labelled') as m3_y_y_yhat,
        avg(dy * dh * dh) filter (where status = 'labelled') as m3_y_yhat_yhat,
        avg(dh * dh * dh) filter (where status = 'labelled') as m3_yhat_labelled,
        avg(du * du * du) filter (where status = 'unlabelled') as m3_yhat_unlabelled,
        count(*) filter (where status = 'human_na') as n_human_na,
        count(*) filter (where status = 'judge_na') as n_judge_na
    from centred
    group by pooled_group
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
