-- The sufficient statistics of stratified PPI (python/judge_bias/ppi/estimator.py):
-- per judge (and the panel of all judges) x model x dimension (each also
-- pooled as 'all') x stratum, nine moments of the labelled units (a human
-- score and the judge's) and the unlabelled ones (the judge's score only), and
-- five third central moments for the skewness-corrected interval. The units
-- (int_ppi_units) whose human labels or judge scores are all NA belong to
-- neither set: they are counted (n_human_na, n_judge_na), never dropped silently.
with

-- read twice (pooled, unit_sums) and not materialised: each reader scans it
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

pooled as {{ not_materialized() }} (
    select
        units.judge,
        units.is_panel,
        units.stratum,
        units.status,
        units.y,
        units.yhat,
        case when poolings.pool_model then 'all' else units.model end as model,
        case when poolings.pool_dimension then 'all' else units.dimension end as dimension
    from units
    cross join poolings
),

-- the group means, for the third central moments of the skewness-corrected
-- interval: one aggregation joined back (a window over the four poolings of
-- every unit sorted them all: most of the model's time, spilling at 3M ratings).
-- The sums and counts are taken once per unit group (model and dimension not
-- pooled) and added up into each pooling's groups: the units are aggregated
-- once, not four times over (the means then differ from an avg over the pooled
-- rows by the order of their additions only, ~1e-16 relative)
unit_sums as (
    select
        judge,
        is_panel,
        model,
        dimension,
        stratum,
        sum(case when status = 'labelled' then y end) as sum_y,
        count(case when status = 'labelled' then y end) as n_y,
        sum(case when status = 'labelled' then yhat end) as sum_yhat_labelled,
        count(case when status = 'labelled' then yhat end) as n_yhat_labelled,
        sum(case when status = 'unlabelled' then yhat end) as sum_yhat_unlabelled,
        count(case when status = 'unlabelled' then yhat end) as n_yhat_unlabelled
    from units
    group by judge, is_panel, model, dimension, stratum
),

group_means as (
    select
        unit_sums.judge,
        unit_sums.is_panel,
        case when poolings.pool_model then 'all' else unit_sums.model end as model,
        case
            when poolings.pool_dimension then 'all' else unit_sums.dimension
        end as dimension,
        unit_sums.stratum,
        sum(unit_sums.sum_y) / nullif(sum(unit_sums.n_y), 0) as mean_y,
        sum(unit_sums.sum_yhat_labelled) / nullif(sum(unit_sums.n_yhat_labelled), 0)
            as mean_yhat_labelled,
        sum(unit_sums.sum_yhat_unlabelled) / nullif(sum(unit_sums.n_yhat_unlabelled), 0)
            as mean_yhat_unlabelled
    from unit_sums
    cross join poolings
    group by
        unit_sums.judge,
        unit_sums.is_panel,
        case when poolings.pool_model then 'all' else unit_sums.model end,
        case when poolings.pool_dimension then 'all' else unit_sums.dimension end,
        unit_sums.stratum
),

centred as (
    select
        pooled.*,
        pooled.y - group_means.mean_y as dy,
        pooled.yhat - group_means.mean_yhat_labelled as dh,
        pooled.yhat - group_means.mean_yhat_unlabelled as du
    from pooled
    inner join group_means
        on
            pooled.judge is not distinct from group_means.judge
            and pooled.is_panel is not distinct from group_means.is_panel
            and pooled.model is not distinct from group_means.model
            and pooled.dimension is not distinct from group_means.dimension
            and pooled.stratum is not distinct from group_means.stratum
),

final as (
    select
        judge,
        is_panel,
        model,
        dimension,
        stratum,
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
    group by judge, is_panel, model, dimension, stratum
)

select * from final
