-- The unit groups of int_ppi_unit_pair_sums (both engines: the numpy model,
-- python/judge_bias/ppi/pairs.py, and the SQL model): the rows of one model of
-- int_ppi_stratum_moments, each with the means of its three centrings' rows
-- (ppi_pair_centrings: own, its model x dimension; dimensions, its model and
-- dimension `all`; models, model and dimension `all`; all of its judge, is_panel
-- and stratum), its key and its pair group. The keys number the rows of one model
-- only, after the rows of model `all` are left out (a name that sorts before
-- `all`, e.g. capitalised, beside one after it would otherwise leave a gap in a
-- pair group's keys), from 0 in (judge, is_panel, model, dimension, stratum)
-- order: a pair group's keys are consecutive, and two units of one prompt (which
-- differ in model or dimension) compare their keys as their strings. pair_group
-- numbers (judge, is_panel). A few hundred rows.
with

moments as (
    select * from {{ ref('int_ppi_stratum_moments') }}
),

unit_groups as (
    select
        own_moments.judge,
        own_moments.is_panel,
        own_moments.model,
        own_moments.dimension,
        own_moments.stratum,
        {{ ppi_centring_means() }}
    from moments as own_moments
    inner join moments as dimensions_moments
        on
            own_moments.judge = dimensions_moments.judge
            and own_moments.is_panel = dimensions_moments.is_panel
            and own_moments.model = dimensions_moments.model
            and dimensions_moments.dimension = 'all'
            and own_moments.stratum = dimensions_moments.stratum
    inner join moments as models_moments
        on
            own_moments.judge = models_moments.judge
            and own_moments.is_panel = models_moments.is_panel
            and models_moments.model = 'all'
            and models_moments.dimension = 'all'
            and own_moments.stratum = models_moments.stratum
    where own_moments.model != 'all'
),

final as (
    select
        *,
        cast(
            row_number() over (order by judge, is_panel, model, dimension, stratum) as integer
        ) - 1 as unit_key,
        cast(dense_rank() over (order by judge, is_panel) as integer) as pair_group
    from unit_groups
)

select * from final
