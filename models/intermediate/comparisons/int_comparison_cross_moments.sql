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
-- The pairs are int_ppi_unit_pair_sums' (the units of one prompt paired once for
-- both cross moments models): their own sums in the rows of one dimension (pairs of
-- that dimension), their dimensions-pooled sums in the rows of dimension 'all'.
with

{{ ppi_pooled_pairs(
    pooled='dimension',
    own_side='own',
    pooled_side='dimensions',
    pair_columns={
        'first_model': 'model_a',
        'first_stratum': 'stratum_a',
        'second_model': 'model_b',
        'second_stratum': 'stratum_b',
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
