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

-- each unit centred on the moments of both its rows (its dimension's and dimension
-- 'all'): the units are paired once, as the pooling of the dimensions pairs them
-- (the pairs of one dimension are those of the pooled row whose units share the
-- dimension), and the poolings are applied to the pairs (a self-join of the pooled
-- units joined twice as many rows, spilling at 3M ratings)
centred as (
    select
        units.judge,
        units.is_panel,
        units.prompt_id,
        units.model,
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
        units.yhat - (
            coalesce(own_moments.n_labelled * own_moments.mean_yhat_labelled, 0)
            + coalesce(own_moments.n_unlabelled * own_moments.mean_yhat_unlabelled, 0)
        ) / (own_moments.n_labelled + own_moments.n_unlabelled) as dg_own,
        case when units.status = 'labelled' then units.y - all_moments.mean_y end as dy_all,
        case
            when units.status = 'labelled' then units.yhat - all_moments.mean_yhat_labelled
        end as dh_all,
        case
            when units.status = 'unlabelled' then units.yhat - all_moments.mean_yhat_unlabelled
        end as du_all,
        units.yhat - (
            coalesce(all_moments.n_labelled * all_moments.mean_yhat_labelled, 0)
            + coalesce(all_moments.n_unlabelled * all_moments.mean_yhat_unlabelled, 0)
        ) / (all_moments.n_labelled + all_moments.n_unlabelled) as dg_all
    from units
    left join moments as own_moments
        on
            units.judge = own_moments.judge
            and units.is_panel = own_moments.is_panel
            and units.model = own_moments.model
            and units.dimension = own_moments.dimension
            and units.stratum = own_moments.stratum
    left join moments as all_moments
        on
            units.judge = all_moments.judge
            and units.is_panel = all_moments.is_panel
            and units.model = all_moments.model
            and all_moments.dimension = 'all'
            and units.stratum = all_moments.stratum
),

unit_pairs as (
    select
        unit_a.judge,
        unit_a.is_panel,
        unit_a.unit_dimension = unit_b.unit_dimension as same_dimension,
        unit_a.unit_dimension,
        unit_a.model as first_model,
        unit_a.stratum as first_stratum,
        unit_b.model as second_model,
        unit_b.stratum as second_stratum,
        unit_a.has_own and unit_b.has_own as has_own,
        unit_a.has_all and unit_b.has_all as has_all,
        unit_a.dy_own as dy_own_a,
        unit_a.dh_own as dh_own_a,
        unit_a.du_own as du_own_a,
        unit_a.dg_own as dg_own_a,
        unit_a.dy_all as dy_all_a,
        unit_a.dh_all as dh_all_a,
        unit_a.du_all as du_all_a,
        unit_a.dg_all as dg_all_a,
        unit_b.dy_own as dy_own_b,
        unit_b.dh_own as dh_own_b,
        unit_b.du_own as du_own_b,
        unit_b.dg_own as dg_own_b,
        unit_b.dy_all as dy_all_b,
        unit_b.dh_all as dh_all_b,
        unit_b.du_all as du_all_b,
        unit_b.dg_all as dg_all_b
    from centred as unit_a
    inner join centred as unit_b
        on
            unit_a.judge = unit_b.judge
            and unit_a.is_panel = unit_b.is_panel
            and unit_a.prompt_id = unit_b.prompt_id
            and (
                unit_a.model < unit_b.model
                or (
                    unit_a.model = unit_b.model
                    and unit_a.unit_dimension < unit_b.unit_dimension
                )
            )
),

pairs as (
    select
        unit_pairs.judge,
        unit_pairs.is_panel,
        case when poolings.pool_dimension then 'all' else unit_pairs.unit_dimension end
            as dimension,
        unit_pairs.first_model,
        unit_pairs.first_stratum,
        unit_pairs.second_model,
        unit_pairs.second_stratum,
        case when poolings.pool_dimension then unit_pairs.dy_all_a else unit_pairs.dy_own_a end
            as dy_a,
        case when poolings.pool_dimension then unit_pairs.dh_all_a else unit_pairs.dh_own_a end
            as dh_a,
        case when poolings.pool_dimension then unit_pairs.du_all_a else unit_pairs.du_own_a end
            as du_a,
        case when poolings.pool_dimension then unit_pairs.dg_all_a else unit_pairs.dg_own_a end
            as dg_a,
        case when poolings.pool_dimension then unit_pairs.dy_all_b else unit_pairs.dy_own_b end
            as dy_b,
        case when poolings.pool_dimension then unit_pairs.dh_all_b else unit_pairs.dh_own_b end
            as dh_b,
        case when poolings.pool_dimension then unit_pairs.du_all_b else unit_pairs.du_own_b end
            as du_b,
        case when poolings.pool_dimension then unit_pairs.dg_all_b else unit_pairs.dg_own_b end
            as dg_b
    from unit_pairs
    cross join poolings
    where
        case
            when poolings.pool_dimension then unit_pairs.has_all
            else unit_pairs.same_dimension and unit_pairs.has_own
        end
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
