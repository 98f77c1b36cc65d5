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

-- each unit centred on the moments of both its rows (its dimension's and dimension
-- 'all'): the units are paired once, as the pooling of the dimensions pairs them
-- (the pairs of one dimension are those of the pooled row whose units share the
-- dimension), and the poolings applied to the sums per pair of unit keys
-- (macros/ppi_pairs.sql). The first unit is the one whose (model, dimension) sorts
-- first: the unit keys number the moments rows in (judge, is_panel, model,
-- dimension, stratum) order and two units of one prompt differ in (model,
-- dimension), so comparing the integer keys orders them as comparing the strings
-- (a third of the node's time at 1M ratings)
{{ ppi_unit_pairs(
    moments_where="model != 'all'",
    pooled='dimension',
    own_keys=['model', 'dimension'],
    pair_keys=[],
    pair_condition='unit_a.unit_key < unit_b.unit_key',
    pair_columns={
        'first_model': 'unit_a.model',
        'first_stratum': 'unit_a.stratum',
        'second_model': 'unit_b.model',
        'second_stratum': 'unit_b.stratum',
    },
    with_judge_centring=true,
) }}

final as (
    select
        judge,
        is_panel,
        dimension,
        first_model,
        first_stratum,
        second_model,
        second_stratum,
        {{ ppi_cross_sums(with_judge_centring=true) }}
    from pairs
    group by
        judge, is_panel, dimension, first_model, first_stratum, second_model, second_stratum
)

select * from final
