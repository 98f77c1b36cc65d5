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

-- each unit centred on the means of both its pooled rows (its model's and model
-- 'all'): the units are paired once and the poolings applied to the pairs, as the
-- two poolings pair the same units (a self-join of the pooled units paired twice
-- as many rows, spilling at 3M ratings)
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
        case when units.status = 'labelled' then units.y - own_moments.mean_y end as dy_own,
        case
            when units.status = 'labelled' then units.yhat - own_moments.mean_yhat_labelled
        end as dh_own,
        case
            when units.status = 'unlabelled' then units.yhat - own_moments.mean_yhat_unlabelled
        end as du_own,
        case when units.status = 'labelled' then units.y - all_moments.mean_y end as dy_all,
        case
            when units.status = 'labelled' then units.yhat - all_moments.mean_yhat_labelled
        end as dh_all,
        case
            when units.status = 'unlabelled' then units.yhat - all_moments.mean_yhat_unlabelled
        end as du_all
    from units
    left join moments as own_moments
        on
            units.judge = own_moments.judge
            and units.is_panel = own_moments.is_panel
            and units.model = own_moments.model
            and units.stratum = own_moments.stratum
    left join moments as all_moments
        on
            units.judge = all_moments.judge
            and units.is_panel = all_moments.is_panel
            and all_moments.model = 'all'
            and units.stratum = all_moments.stratum
),

unit_pairs as (
    select
        unit_a.judge,
        unit_a.is_panel,
        unit_a.unit_model,
        unit_a.stratum as stratum_a,
        unit_b.stratum as stratum_b,
        unit_a.has_own and unit_b.has_own as has_own,
        unit_a.has_all and unit_b.has_all as has_all,
        unit_a.dy_own as dy_own_a,
        unit_a.dh_own as dh_own_a,
        unit_a.du_own as du_own_a,
        unit_a.dy_all as dy_all_a,
        unit_a.dh_all as dh_all_a,
        unit_a.du_all as du_all_a,
        unit_b.dy_own as dy_own_b,
        unit_b.dh_own as dh_own_b,
        unit_b.du_own as du_own_b,
        unit_b.dy_all as dy_all_b,
        unit_b.dh_all as dh_all_b,
        unit_b.du_all as du_all_b
    from centred as unit_a
    inner join centred as unit_b
        on
            unit_a.judge = unit_b.judge
            and unit_a.is_panel = unit_b.is_panel
            and unit_a.prompt_id = unit_b.prompt_id
            and unit_a.unit_model = unit_b.unit_model
            and unit_a.unit_dimension < unit_b.unit_dimension
),

pairs as (
    select
        unit_pairs.judge,
        unit_pairs.is_panel,
        case when poolings.pool_model then 'all' else unit_pairs.unit_model end as model,
        unit_pairs.stratum_a,
        unit_pairs.stratum_b,
        case when poolings.pool_model then unit_pairs.dy_all_a else unit_pairs.dy_own_a end as dy_a,
        case when poolings.pool_model then unit_pairs.dh_all_a else unit_pairs.dh_own_a end as dh_a,
        case when poolings.pool_model then unit_pairs.du_all_a else unit_pairs.du_own_a end as du_a,
        case when poolings.pool_model then unit_pairs.dy_all_b else unit_pairs.dy_own_b end as dy_b,
        case when poolings.pool_model then unit_pairs.dh_all_b else unit_pairs.dh_own_b end as dh_b,
        case when poolings.pool_model then unit_pairs.du_all_b else unit_pairs.du_own_b end as du_b
    from unit_pairs
    cross join poolings
    where case when poolings.pool_model then unit_pairs.has_all else unit_pairs.has_own end
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
