-- The cross moments of the pooled PPI rows (python/judge_bias/ppi/clusters.py).
-- A human labels a completion on every dimension at once, so in a row pooling the
-- dimensions (dimension 'all') a completion's units share their label draw and
-- their errors: the estimator's variance is that of its per-completion totals of
-- influence, which needs, beside each stratum's own moments, the sums over every
-- pair of units of one completion of the products of their centred scores. Per
-- judge (or panel) x model (and 'all') x pair of strata (stratum_a of the unit
-- whose dimension sorts first, stratum_b of the other), the nine sums by the
-- pair's label status: ll_* both labelled, lu_* / ul_* one of them, uu_* neither.
-- dy, dh: a labelled unit's human and judge scores minus its stratum's labelled
-- means; du: an unlabelled unit's judge score minus its stratum's unlabelled mean.
-- Rows of one dimension hold one unit per completion: no pairs, no rows here.
with

units as (
    select * from {{ ref('int_ppi_units') }}
    where status in ('labelled', 'unlabelled')
),

moments as (
    select * from {{ ref('int_ppi_stratum_moments') }}
    where dimension = 'all'
),

poolings as (
    select flags.pool_model
    from (values (false), (true)) as flags (pool_model)
),

pooled as (
    select
        units.judge,
        units.is_panel,
        units.prompt_id,
        units.model as unit_model,
        units.dimension as unit_dimension,
        units.stratum,
        units.status,
        units.y,
        units.yhat,
        case when poolings.pool_model then 'all' else units.model end as model
    from units
    cross join poolings
),

centred as (
    select
        pooled.judge,
        pooled.is_panel,
        pooled.model,
        pooled.prompt_id,
        pooled.unit_model,
        pooled.unit_dimension,
        pooled.stratum,
        case when pooled.status = 'labelled' then pooled.y - moments.mean_y end as dy,
        case
            when pooled.status = 'labelled' then pooled.yhat - moments.mean_yhat_labelled
        end as dh,
        case
            when pooled.status = 'unlabelled' then pooled.yhat - moments.mean_yhat_unlabelled
        end as du
    from pooled
    inner join moments
        on
            pooled.judge = moments.judge
            and pooled.is_panel = moments.is_panel
            and pooled.model = moments.model
            and pooled.stratum = moments.stratum
),

pairs as (
    select
        unit_a.judge,
        unit_a.is_panel,
        unit_a.model,
        unit_a.stratum as stratum_a,
        unit_b.stratum as stratum_b,
        unit_a.dy as dy_a,
        unit_a.dh as dh_a,
        unit_a.du as du_a,
        unit_b.dy as dy_b,
        unit_b.dh as dh_b,
        unit_b.du as du_b
    from centred as unit_a
    inner join centred as unit_b
        on
            unit_a.judge = unit_b.judge
            and unit_a.is_panel = unit_b.is_panel
            and unit_a.model = unit_b.model
            and unit_a.prompt_id = unit_b.prompt_id
            and unit_a.unit_model = unit_b.unit_model
            and unit_a.unit_dimension < unit_b.unit_dimension
),

final as (
    select
        judge,
        is_panel,
        model,
        'all' as dimension,
        stratum_a,
        stratum_b,
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
    from pairs
    group by judge, is_panel, model, stratum_a, stratum_b
)

select * from final
