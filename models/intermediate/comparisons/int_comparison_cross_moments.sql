-- The cross moments of the paired model comparisons (model_comparisons;
-- python/judge_bias/comparisons/paired.py). The difference of two models' PPI
-- means is paired by prompt: the units of both models at one prompt share the
-- prompt's difficulty, so the estimator's variance is that of its per-prompt
-- totals of influence, which needs, beside each stratum's own moments, the sums
-- over every pair of units of one prompt of the products of their centred scores.
-- A unit is a model x dimension at the prompt (one per model in the rows of one
-- dimension; one per model x dimension in the rows pooling them, dimension 'all').
-- Per judge (or panel) x dimension x pair of (model, stratum), the first unit the
-- one whose (model, dimension) sorts first: the nine sums of ppi_clusters by the
-- pair's label status (ll_* both labelled, lu_* / ul_* one of them, uu_* neither)
-- and gg, the products of the judge scores centred on the stratum's mean over all
-- its units (the judge-only difference). dy, dh: a labelled unit's human and judge
-- scores minus its stratum's labelled means; du: an unlabelled unit's judge score
-- minus its stratum's unlabelled mean.
with

units as (
    select * from {{ ref('int_ppi_units') }}
    where status in ('labelled', 'unlabelled')
),

moments as (
    select * from {{ ref('int_ppi_stratum_moments') }}
    where model != 'all'
),

poolings as (
    select flags.pool_dimension
    from (values (false), (true)) as flags (pool_dimension)
),

pooled as (
    select
        units.judge,
        units.is_panel,
        units.prompt_id,
        units.model,
        units.dimension as unit_dimension,
        units.stratum,
        units.status,
        units.y,
        units.yhat,
        case when poolings.pool_dimension then 'all' else units.dimension end as dimension
    from units
    cross join poolings
),

centred as (
    select
        pooled.judge,
        pooled.is_panel,
        pooled.dimension,
        pooled.prompt_id,
        pooled.model,
        pooled.unit_dimension,
        pooled.stratum,
        case when pooled.status = 'labelled' then pooled.y - moments.mean_y end as dy,
        case
            when pooled.status = 'labelled' then pooled.yhat - moments.mean_yhat_labelled
        end as dh,
        case
            when pooled.status = 'unlabelled' then pooled.yhat - moments.mean_yhat_unlabelled
        end as du,
        pooled.yhat - (
            coalesce(moments.n_labelled * moments.mean_yhat_labelled, 0)
            + coalesce(moments.n_unlabelled * moments.mean_yhat_unlabelled, 0)
        ) / (moments.n_labelled + moments.n_unlabelled) as dg
    from pooled
    inner join moments
        on
            pooled.judge = moments.judge
            and pooled.is_panel = moments.is_panel
            and pooled.model = moments.model
            and pooled.dimension = moments.dimension
            and pooled.stratum = moments.stratum
),

pairs as (
    select
        unit_a.judge,
        unit_a.is_panel,
        unit_a.dimension,
        unit_a.model as first_model,
        unit_a.stratum as first_stratum,
        unit_b.model as second_model,
        unit_b.stratum as second_stratum,
        unit_a.dy as dy_a,
        unit_a.dh as dh_a,
        unit_a.du as du_a,
        unit_a.dg as dg_a,
        unit_b.dy as dy_b,
        unit_b.dh as dh_b,
        unit_b.du as du_b,
        unit_b.dg as dg_b
    from centred as unit_a
    inner join centred as unit_b
        on
            unit_a.judge = unit_b.judge
            and unit_a.is_panel = unit_b.is_panel
            and unit_a.dimension = unit_b.dimension
            and unit_a.prompt_id = unit_b.prompt_id
            and (
                unit_a.model < unit_b.model
                or (
                    unit_a.model = unit_b.model
                    and unit_a.unit_dimension < unit_b.unit_dimension
                )
            )
),

final as (
    select
        judge,
        is_panel,
        dimension,
        first_model,
        first_stratum,
        second_model,
        second_stratum,
        count(*) as n_pairs,
        coalesce(sum(dy_a * dy_b), 0) as ll_yy,
        coalesce(sum(dy_a * dh_b), 0) as ll_yh,
        coalesce(sum(dh_a * dy_b), 0) as ll_hy,
        coalesce(sum(dh_a * dh_b), 0) as ll_hh,
        coalesce(sum(dy_a * du_b), 0) as lu_yu,
        coalesce(sum(dh_a * du_b), 0) as lu_hu,
        coalesce(sum(du_a * dy_b), 0) as ul_uy,
        coalesce(sum(du_a * dh_b), 0) as ul_uh,
        coalesce(sum(du_a * du_b), 0) as uu_uu,
        coalesce(sum(dg_a * dg_b), 0) as gg
    from pairs
    group by
        judge, is_panel, dimension, first_model, first_stratum, second_model, second_stratum
)

select * from final
