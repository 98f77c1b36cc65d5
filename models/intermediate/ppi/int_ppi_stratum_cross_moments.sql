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
-- The pairs are int_ppi_unit_pair_sums' of one model (its first unit's dimension
-- sorts first), their dimensions-pooled sums in the rows of one model and their
-- models-pooled sums in the rows of model 'all'.
with

{{ ppi_pooled_pairs(
    pooled='model',
    own_side='dimensions',
    pooled_side='models',
    pair_columns={'stratum_a': 'stratum_a', 'stratum_b': 'stratum_b'},
    pair_where='pair_sums.model_a = pair_sums.model_b',
) }}

final as (
    select
        judge,
        is_panel,
        model,
        'all' as dimension,
        stratum_a,
        stratum_b,
        {{ ppi_cross_sums() }}
    from pairs
    group by judge, is_panel, model, stratum_a, stratum_b
)

select * from final
